"""``make test-sleeplab``: the sleep lab's modules in four pytest processes at once, each module its
own QEMU guest. The guests are suspended most of the time (a suspended guest costs no CPU), so side
by side the lab takes about as long as its longest slot instead of their sum.

    python tests/sleeplab/parallel.py [PYTEST ARGS...]

Builds the guest first (once, cached), prints each slot's output when it ends, and exits non-zero
when any slot failed.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SLOTS = (
    ("test_soak.py",),  # about 20 minutes of random sleeps
    ("test_wake_trials.py",),  # 20 wakes, one a minute
    ("test_sleep.py",),
    ("test_wake.py",),
)


def main(args: list[str]) -> int:
    sys.path.insert(0, str(REPO))
    from tests.sleeplab.build import build

    started = time.monotonic()
    build()
    running: list[tuple[tuple[str, ...], subprocess.Popen[bytes], Path, float]] = []
    # make test runs the lab in the background and stops it with SIGTERM when it is interrupted:
    # the slots go with it (their QEMU guests die with their pytest, by PR_SET_PDEATHSIG).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    with tempfile.TemporaryDirectory(prefix="sleeplab-") as logs, contextlib.ExitStack() as stops:
        stops.callback(_kill, running)
        for number, modules in enumerate(SLOTS):
            log = Path(logs) / f"slot{number}.log"
            command = [
                sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "-m", "sleeplab",
                *(str(HERE / module) for module in modules), *args,
            ]  # fmt: skip
            with log.open("wb") as out:
                process = subprocess.Popen(command, cwd=REPO, stdout=out, stderr=subprocess.STDOUT)
            running.append((modules, process, log, time.monotonic()))
            time.sleep(20)  # their boots (CPU-bound, emulated) one after the other
        failed = []
        while running:
            for entry in list(running):
                modules, process, log, began = entry
                code = process.poll()
                if code is None:
                    continue
                running.remove(entry)
                took = time.monotonic() - began
                print(f"=== sleeplab {' '.join(modules)}: exit {code} in {took:.0f} s")
                print(log.read_text(errors="replace"), flush=True)
                if code != 0:
                    failed.append(" ".join(modules))
            time.sleep(1)
    print(f"=== sleeplab: {time.monotonic() - started:.0f} s wall", end="")
    print(f"; failed: {', '.join(failed)}" if failed else "; all passed")
    return 1 if failed else 0


def _kill(running: list[tuple[tuple[str, ...], subprocess.Popen[bytes], Path, float]]) -> None:
    for _modules, process, _log, _began in running:
        process.kill()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
