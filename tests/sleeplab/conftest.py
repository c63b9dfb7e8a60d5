"""The sleep lab's fixtures: a QEMU guest that truly suspends (S3), running the real headless app.

``lab`` (module scope): one guest per test module, booted with the app started in it and
answering; QEMU is killed at teardown whatever happened (and with the test process, by
PR_SET_PDEATHSIG). Each module is its own guest, so ``make test-sleeplab`` runs the modules side by
side (tests/sleeplab/parallel.py): the guests sleep most of the time.

A failing test prints the tail of the app's log and of the guest's console.
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

if sys.platform.startswith("linux"):
    from tests.sleeplab.build import find_kernel
    from tests.sleeplab.vm import Lab


def _missing() -> str | None:
    if not sys.platform.startswith("linux"):
        return "the sleep lab runs on Linux"
    if shutil.which("qemu-system-x86_64") is None:
        return "no qemu-system-x86_64: install qemu-system-x86 (make system-deps)"
    try:
        find_kernel()
    except FileNotFoundError as error:
        return str(error)
    if not Path("/bin/busybox").exists():
        return "no /bin/busybox: install busybox-static (make system-deps)"
    return None


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    missing = _missing()
    if missing:
        pytest.skip(missing)
    started = time.monotonic()
    guest = Lab(tmp_path_factory.mktemp("sleeplab"))
    try:
        guest.boot()
        booted = time.monotonic() - started
        guest.start_app()
        guest.wait_app()
        print(
            f"\nsleeplab: guest booted in {booted:.0f} s, the app answered"
            f" {time.monotonic() - started - booted:.0f} s later"
        )
        yield guest
    finally:
        guest.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and report.failed:
        guest = getattr(item, "funcargs", {}).get("lab")
        if guest is not None and guest.process is not None:
            try:
                if guest.status() != "running":
                    guest.qmp("system_wakeup")
                    time.sleep(5)
                log = "\n".join(guest.app_log().splitlines()[-80:])
            except Exception as error:
                log = f"(cannot read the app's log: {error})"
            report.sections.append(("sleeplab: the app's log (tail)", log))
            report.sections.append(("sleeplab: QEMU and the console (tail)", guest.tail(40)))
