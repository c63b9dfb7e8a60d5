"""``app.status`` every 25 ms from a client process of its own, as a user's script or the CLI
would call it through a wake (issue 25: <= 150 ms worst); each call's round trip, in seconds.

Usage: python bench/status_poller.py DATA_DIR OUT_JSON STOP_FILE (prints ``ready`` once
connected, calls until STOP_FILE exists, then writes the round trips to OUT_JSON).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.desktop.harness import read_first_line

EVERY = 0.025


class StatusPoller:
    """The poller's process, started connected to the app of ``data``; ``stop`` ends it."""

    def __init__(self, data: Path, work: Path) -> None:
        self._out = work / f"poll-{data.name}.json"
        self._stop = work / f"poll-{data.name}.stop"
        self._process = subprocess.Popen(
            [sys.executable, __file__, str(data), str(self._out), str(self._stop)],
            cwd=ROOT, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert self._process.stdout is not None
        if read_first_line(self._process.stdout, 30) != "ready":
            self.stop()
            raise RuntimeError("the status poller did not connect to the app")

    def stop(self) -> list[float]:
        """Each call's round trip, in seconds (none if the poller failed)."""
        self._stop.touch()
        try:
            self._process.wait(60)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        if self._process.stdout is not None:
            self._process.stdout.close()
        took: list[float] = json.loads(self._out.read_text()) if self._out.exists() else []
        return took


def percentile(values: list[float], share: float) -> float:
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def poll(data: Path, out: Path, stop: Path) -> None:
    from domi_desktop.frontdoor.rpc.client import connect_to_app

    client = connect_to_app(data)
    assert client is not None, f"no app answers for {data}"
    print("ready", flush=True)
    took: list[float] = []
    due = time.perf_counter()
    while not stop.exists():
        began = time.perf_counter()
        client.call("app.status", {})
        took.append(time.perf_counter() - began)
        # On a fixed cadence: a call that waited longer than 25 ms is followed at once.
        due += EVERY
        time.sleep(max(0.0, due - time.perf_counter()))
    client.close()
    out.write_text(json.dumps(took))


if __name__ == "__main__":
    poll(*(Path(arg) for arg in sys.argv[1:4]))
