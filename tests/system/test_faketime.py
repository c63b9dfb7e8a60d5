"""tests/support/faketime.py moves a running child's clock, wall and monotonic alike."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest

from tests.support.faketime import FakeTimeError, fake_clock, find_library, parse_offset

# Prints "wall monotonic" for every line it reads, so the test asks for the time when it wants.
CHILD = """
import sys, time
for _ in sys.stdin:
    time.sleep(0.01)  # sleeping must keep working under the preload
    print(time.time(), time.monotonic(), flush=True)
"""

DAY = 86400.0


def ask(child: subprocess.Popen[str]) -> tuple[float, float]:
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write("\n")
    child.stdin.flush()
    wall, monotonic = child.stdout.readline().split()
    return float(wall), float(monotonic)


@pytest.mark.linux_only
@pytest.mark.skipif(find_library() is None, reason="libfaketime not installed")
def test_it_jumps_a_running_child_clock_at_once(tmp_path: Path) -> None:
    clock = fake_clock(tmp_path)
    with subprocess.Popen(
        [sys.executable, "-c", CHILD],
        env={**os.environ, **clock.env},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as child:
        # Each jump is bracketed by the real time that passed around the asks (no fixed slack
        # that a loaded machine could exceed).
        real0 = time.time()
        wall_before, mono_before = ask(child)
        assert real0 <= wall_before <= time.time()  # "+0": the real time

        clock.jump("+3d")
        wall_after, mono_after = ask(child)
        passed = time.time() - real0
        clock.jump(timedelta(hours=-1))
        wall_back, _ = ask(child)
        passed_back = time.time() - real0
    assert child.returncode == 0
    assert 3 * DAY <= wall_after - wall_before <= 3 * DAY + passed
    # The monotonic clock leaps too: to the child, a jump looks like a suspend and resume.
    assert 3 * DAY <= mono_after - mono_before <= 3 * DAY + passed
    assert 3 * DAY - 3600 <= wall_back - wall_before <= 3 * DAY - 3600 + passed_back
    assert clock.offset == timedelta(days=3, hours=-1)


def test_it_reads_libfaketime_offsets() -> None:
    assert parse_offset("+3d") == timedelta(days=3)
    assert parse_offset("-90") == timedelta(seconds=-90)
    assert parse_offset("1.5h") == timedelta(minutes=90)
    with pytest.raises(FakeTimeError, match="'3 days'"):
        parse_offset("3 days")


@pytest.mark.linux_only
@pytest.mark.skipif(find_library() is None, reason="libfaketime not installed")
def test_it_gives_the_env_a_child_needs(tmp_path: Path) -> None:
    clock = fake_clock(tmp_path, "+1h")
    assert clock.env["FAKETIME_NO_CACHE"] == "1"
    assert Path(clock.env["LD_PRELOAD"]).exists()
    assert Path(clock.env["FAKETIME_TIMESTAMP_FILE"]).read_text() == "+3600.000000\n"
