"""Fixtures of the system tests: real apps in real processes.

data    a data dir of its own, the app's socket in the default place (no XDG_RUNTIME_DIR)
fleet   several headless apps on one PostgreSQL store, each with its own host name and clock
        (tests/system/fleet.py)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.system.fleet import fleet  # noqa: F401  (the fixture of the fleet tests)


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    path = tmp_path / "data"
    path.mkdir()
    return path
