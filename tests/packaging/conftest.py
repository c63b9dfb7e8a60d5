"""The packaging tests' figures (build time, sizes, start-up), printed at the end of the run."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]

_FIGURES: list[str] = []


@pytest.fixture(scope="session")
def figures() -> list[str]:
    """Append a line to show it in a 'packaging figures' section after the tests."""
    return _FIGURES


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _FIGURES:
        terminalreporter.section("packaging figures")
        for line in _FIGURES:
            terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def linux_dist(
    tmp_path_factory: pytest.TempPathFactory, figures: list[str]
) -> tuple[Path, float | None]:
    """The folder with what ``packaging/build_linux.sh`` makes (the bundle, the tarball, the .deb
    and its apt repository) and the build's seconds: built once per session into a temp dir, or
    given by ``DOMI_PACKAGE_DIST=DIR`` (CI builds once, then tests what it uploads; seconds None).
    The .deb of a test build is gzip-compressed (``DOMI_DEB_COMPRESSION``): xz would add 1.5-3
    minutes on a 2-core machine, and dpkg reads both the same way."""
    given = os.environ.get("DOMI_PACKAGE_DIST")
    if given:
        return Path(given).resolve(), None
    if importlib.util.find_spec("PyInstaller") is None:
        pytest.fail(f"PyInstaller is not installed for {sys.executable}: make package-test")
    work = tmp_path_factory.mktemp("package")
    dist = work / "dist"
    env = {
        **os.environ,
        "PYTHON": sys.executable,
        "DIST_DIR": str(dist),
        "BUILD_DIR": str(work / "build"),
        "DOMI_DEB_COMPRESSION": os.environ.get("DOMI_DEB_COMPRESSION", "gzip"),
    }
    started = time.monotonic()
    done = subprocess.run(
        ["bash", str(ROOT / "packaging/build_linux.sh")],
        env=env, capture_output=True, text=True, timeout=1800, check=False,
    )  # fmt: skip
    seconds = time.monotonic() - started
    assert done.returncode == 0, f"build failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    figures.append(f"build_linux.sh took {seconds:.1f} s (bundle, tarball, .deb, apt repository)")
    return dist, seconds
