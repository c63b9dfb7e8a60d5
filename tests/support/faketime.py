"""Moving a child process's clock at run time with libfaketime (Debian: `libfaketime`).

    clock = fake_clock(tmp_path)
    child = subprocess.Popen(argv, env={**os.environ, **clock.env})
    clock.jump("+3d")          # the child's wall clock is now three days ahead, at once

The child re-reads the timestamp file on every time call (FAKETIME_NO_CACHE=1, ~5 µs a call), so
a jump takes effect immediately without restarting it. Measured on Debian 12 (TESTBED.md):
  - the offset moves CLOCK_MONOTONIC too, so a jump looks to the child like a suspend/resume:
    QTimers and time.monotonic() deadlines see the same leap as the wall clock;
  - do not set FAKETIME_DONT_FAKE_MONOTONIC=1: Python's time.sleep then fails with EINVAL;
  - the preload affects every process the child starts, as LD_PRELOAD is inherited.
"""

from __future__ import annotations

import glob
import re
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

# The multi-threaded build: the apps under test (Qt) call the clock from several threads.
LIBRARY_PATTERNS = (
    "/usr/lib/*/faketime/libfaketimeMT.so.1",
    "/usr/lib/faketime/libfaketimeMT.so.1",
)

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "y": 365 * 86400}
_OFFSET = re.compile(r"^([+-]?\d+(?:\.\d+)?)([smhdy]?)$")


class FakeTimeError(Exception):
    """libfaketime is missing or an offset cannot be understood."""


def find_library() -> Path | None:
    for pattern in LIBRARY_PATTERNS:
        found = sorted(glob.glob(pattern))
        if found:
            return Path(found[0])
    return None


def parse_offset(spec: str | timedelta) -> timedelta:
    """'+3d', '-90', '1.5h' (libfaketime's units: s m h d y; no unit = seconds) or a timedelta."""
    if isinstance(spec, timedelta):
        return spec
    match = _OFFSET.match(spec.strip())
    if match is None:
        raise FakeTimeError(
            f"clock offset {spec!r}: expected [+-]NUMBER[s|m|h|d|y], e.g. '+3d' or '-90'"
        )
    number, unit = match.groups()
    return timedelta(seconds=float(number) * _UNITS[unit or "s"])


@dataclass
class FakeClock:
    """The environment a child needs, and the offset of its clock from the real one."""

    timestamp_file: Path
    library: Path
    offset: timedelta = field(default_factory=timedelta)

    @property
    def env(self) -> dict[str, str]:
        return {
            "LD_PRELOAD": str(self.library),
            "FAKETIME_TIMESTAMP_FILE": str(self.timestamp_file),
            "FAKETIME_NO_CACHE": "1",
        }

    def jump(self, by: str | timedelta) -> timedelta:
        """Move the children's clocks by `by` from where they are now; returns the new offset."""
        return self.set_offset(self.offset + parse_offset(by))

    def set_offset(self, offset: str | timedelta) -> timedelta:
        """Put the children's clocks `offset` away from the real clock."""
        self.offset = parse_offset(offset)
        # Replace, not rewrite in place: a child reading mid-write would see an empty file.
        partial = self.timestamp_file.with_name(self.timestamp_file.name + ".new")
        partial.write_text(f"{self.offset.total_seconds():+.6f}\n", encoding="ascii")
        partial.replace(self.timestamp_file)
        return self.offset


def fake_clock(directory: Path, offset: str | timedelta = "+0") -> FakeClock:
    """A FakeClock whose timestamp file lives in `directory`, starting at `offset`."""
    library = find_library()
    if library is None:
        raise FakeTimeError(
            "libfaketime not found (looked for "
            + ", ".join(LIBRARY_PATTERNS)
            + "): apt-get install libfaketime"
        )
    clock = FakeClock(directory / "faketime.rc", library)
    clock.set_offset(offset)
    return clock
