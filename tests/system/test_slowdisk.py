"""The slow-disk shim slows the syncs of the process it is preloaded into, and only those."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import slowdisk

pytestmark = pytest.mark.linux_only  # LD_PRELOAD

SYNC_TIMES = """
import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT)
began = time.perf_counter()
for _ in range(3):
    os.write(fd, b"x")
    os.fsync(fd)
    os.fdatasync(fd)
print(time.perf_counter() - began)
"""


def test_every_sync_of_the_preloaded_process_waits_the_delay(tmp_path: Path) -> None:
    library = slowdisk.build(tmp_path / "build")
    if library is None:
        pytest.skip("no C compiler")
    env = {**os.environ, **slowdisk.environment(library, delay_ms=100)}
    slowed = subprocess.run(
        [sys.executable, "-c", SYNC_TIMES, str(tmp_path / "file")],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    # Six syncs of 100 ms each at least: a lower bound, which a loaded machine only raises.
    assert float(slowed.stdout) >= 0.6
    assert slowdisk.build(tmp_path / "build") == library  # built once
