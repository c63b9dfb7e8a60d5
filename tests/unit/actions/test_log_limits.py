"""A run's log keeps its first and last part; a line in the middle and a note at the end say so."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from domi_desktop.actions import ActionRunner, LogLimits
from domi_desktop.actions.capture import NOTE_PREFIX, OutputCapture
from domi_desktop.clock import SystemClock
from domi_desktop.model import CommandAction, RunStatus
from domi_desktop.secrets import Masker
from tests.unit.actions.conftest import MakeRequest

KIB = 1024
SMALL = LogLimits(head=64 * KIB, tail=128 * KIB)
MARKER_ROOM = 200
"""Generous room for the line that says what was cut."""

LINES = 1_000_000
PRINT_50_MB = (
    "import sys\n"
    f"for i in range({LINES}):\n"
    "    sys.stdout.write(f'line {i:08d} ' + 'x' * 40 + '\\n')\n"
)


@pytest.mark.posix_only  # POSIX pipes; the capture is the same
def test_a_job_printing_50_mb_leaves_a_log_of_its_head_its_tail_and_the_cut(
    make_request: MakeRequest,
) -> None:
    runner = ActionRunner(SystemClock(), log_limits=SMALL)
    request = make_request(CommandAction(argv=(sys.executable, "-c", PRINT_50_MB)))

    result = runner.run(request)

    assert result.status is RunStatus.succeeded
    log = request.log_path.read_bytes()
    assert len(log) <= SMALL.head + SMALL.tail + MARKER_ROOM
    assert log.startswith(b"line 00000000 ")
    cut_line = next(line for line in log.split(b"\n") if b"bytes of output cut here" in line)
    assert cut_line.startswith(NOTE_PREFIX.encode())
    cut = int(cut_line.split(b"... ")[1].split(b" bytes")[0].replace(b",", b""))
    # The head ends mid-line: the cut line starts on a line of its own.
    body = log.replace(b"\n" + cut_line + b"\n", b"")
    # Nothing was lost but what the line says, nothing is doubled: byte counts add up.
    total = LINES * len(b"line 00000000 " + b"x" * 40 + b"\n")
    summary = result.output_tail.splitlines()[-1]
    assert total + len(summary) + 1 == len(body) + cut
    assert f"line {LINES - 1:08d} " in result.output_tail
    assert summary == (
        f"{NOTE_PREFIX}the output was 52.5 MiB; its log keeps the first 64.0 KiB and the last "
        "128.0 KiB"
    )
    assert log.endswith(summary.encode() + b"\n")
    # The kept end starts at a line start, right after the cut line.
    after = log.split(cut_line + b"\n")[1]
    assert after.startswith(b"line ")


def test_output_within_the_limits_is_kept_whole_with_no_note(tmp_path: Path) -> None:
    path = tmp_path / "run.log"
    data = b"".join(b"%06d\n" % i for i in range((SMALL.head + SMALL.tail) // 7))
    with OutputCapture(path, Masker([]), SMALL) as capture:
        capture.write(data)
    assert path.read_bytes() == data
    assert capture.cut == 0


def test_the_log_stays_bounded_while_the_job_still_writes(tmp_path: Path) -> None:
    path = tmp_path / "run.log"
    limits = LogLimits(head=10, tail=300)
    with OutputCapture(path, Masker([]), limits) as capture:
        for i in range(10_000):
            capture.write(b"%05d\n" % i)
            assert path.stat().st_size <= limits.head + 2 * limits.tail + MARKER_ROOM
        assert capture.cut > 0
    text = path.read_text()
    assert text.startswith("00000\n0000")
    assert text.splitlines()[-2] == "09999"


def test_secrets_are_masked_in_both_kept_parts(tmp_path: Path) -> None:
    path = tmp_path / "run.log"
    with OutputCapture(path, Masker(["hunter22"]), LogLimits(head=100, tail=100)) as capture:
        capture.write(b"hunter22\n" * 1000)
    assert b"hunter22" not in path.read_bytes()


def test_limits_that_keep_no_end_are_refused() -> None:
    with pytest.raises(ValueError, match="tail >= 1"):
        LogLimits(head=10, tail=0)


def test_concurrent_output_and_notes_keep_the_log_consistent(tmp_path: Path) -> None:
    path = tmp_path / "run.log"
    with OutputCapture(path, Masker([]), LogLimits(head=1000, tail=1000)) as capture:
        writers = [threading.Thread(target=_write_lines, args=(capture, 500)) for _ in range(3)]
        for writer in writers:
            writer.start()
        capture.note("a note meanwhile")
        for writer in writers:
            writer.join()
    assert path.stat().st_size <= 2000 + MARKER_ROOM + 200
    assert path.read_text().count("bytes of output cut here") == 1


def _write_lines(capture: OutputCapture, count: int) -> None:
    for _ in range(count):
        capture.write(b"y" * 99 + b"\n")
