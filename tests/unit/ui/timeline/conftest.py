"""The fixture week in a real SQLite store, seen on Riga's clock, for the Timeline's tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from domi_desktop.cron import set_local_resolver
from domi_desktop.store import Store
from tests.support.timeline_week import NOW, RIGA, Week, build_week


@pytest.fixture(autouse=True)
def riga() -> Iterator[None]:
    set_local_resolver(lambda: RIGA)
    yield
    set_local_resolver(None)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path / "data", now=NOW, machine="laptop") as opened:
        yield opened


@pytest.fixture
def week(store: Store) -> Week:
    return build_week(store)
