"""The app's log is written by a thread of its own, in batches: every record reaches the file, in
order, the file rotates at its size, and one that cannot be written is said once on stderr."""

from __future__ import annotations

import atexit
import logging
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from domi_desktop.app import logs

LINE = "x" * 80


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[Path]:
    root = logging.getLogger()
    before, level = root.handlers[:], root.level
    logs.setup_logging(tmp_path)
    yield tmp_path
    for handler in root.handlers:
        if isinstance(handler, logs._Handing):
            atexit.unregister(handler.writer.stop)
            handler.writer.stop()
    root.handlers[:] = before
    root.setLevel(level)


def stop_writer() -> None:
    for handler in logging.getLogger().handlers:
        if isinstance(handler, logs._Handing):
            atexit.unregister(handler.writer.stop)
            handler.writer.stop()
    logging.getLogger().handlers[:] = []


def lines(data: Path) -> list[str]:
    files = sorted(data.glob("domi-desktop.log*"), key=lambda f: f.name, reverse=True)
    return [line for f in files for line in f.read_text().splitlines()]


def test_a_record_is_handed_on_while_another_thread_holds_the_handlers_lock(setup: Path) -> None:
    # The queue needs no lock: a job thread that took it and then waited for the GIL held the
    # GUI thread's next record back (85 ms in a 10,000-schedule wake).
    (handing,) = [h for h in logging.getLogger().handlers if isinstance(h, logs._Handing)]
    assert handing.lock is not None
    with handing.lock:
        logged = threading.Thread(
            target=logging.getLogger("domi_desktop.test").info, args=("past the lock",)
        )
        logged.start()
        logged.join(timeout=30)
        assert not logged.is_alive(), "the record waited for the handler's lock"
    stop_writer()
    assert [line.split(" INFO ")[1] for line in lines(setup)] == ["past the lock"]


def test_a_flood_from_two_threads_reaches_the_file_in_order_and_rotates(setup: Path) -> None:
    log = logging.getLogger("domi_desktop.test")

    def flood(who: str) -> None:
        for index in range(15_000):
            log.info("%s %05d %s", who, index, LINE)

    other = threading.Thread(target=flood, args=("other",))
    other.start()
    flood("main")
    other.join()
    stop_writer()
    written = lines(setup)
    assert len(written) == 30_000
    for who in ("main", "other"):
        mine = [line.split()[4] for line in written if line.split()[3] == who]
        assert mine == [f"{index:05d}" for index in range(15_000)]
    sizes = [f.stat().st_size for f in setup.glob("domi-desktop.log*")]
    assert len(sizes) == 2 and max(sizes) < 2_000_000


def test_an_exception_is_written_with_its_traceback(setup: Path) -> None:
    try:
        raise ValueError("the cause")
    except ValueError:
        logging.getLogger("domi_desktop").exception("it failed")
    stop_writer()
    text = (setup / "domi-desktop.log").read_text()
    assert "ERROR it failed" in text and "ValueError: the cause" in text


@pytest.mark.linux_only  # /dev/full: every write fails with "no space left on device"
def test_a_log_that_cannot_be_written_is_said_once_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "domi-desktop.log").symlink_to("/dev/full")
    root = logging.getLogger()
    before = root.handlers[:]
    try:
        logs.setup_logging(tmp_path)
        for index in range(50):
            logging.getLogger("domi_desktop").info("line %s", index)
        stop_writer()
    finally:
        root.handlers[:] = before
    err = capsys.readouterr().err
    assert err.count("cannot write the log") == 1
    assert "line 49" in err and "Traceback" not in err
