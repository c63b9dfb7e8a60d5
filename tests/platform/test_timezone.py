from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo

import pytest

from domi_desktop.cron import set_local_resolver
from domi_desktop.platform.timezone import ZoneWatcher


class Now:
    def __init__(self, at: datetime) -> None:
        self.at = at

    def __call__(self) -> datetime:
        return self.at


@pytest.fixture
def now() -> Now:
    return Now(datetime(2026, 3, 28, 12, 0, tzinfo=UTC))


@pytest.fixture
def resolver() -> Iterator[list[tzinfo]]:
    """The OS zone as the platform layer may report it: the last zone in the list."""
    zones: list[tzinfo] = []
    set_local_resolver(lambda: zones[-1])
    yield zones
    set_local_resolver(None)


def test_nothing_changed_is_no_change(monkeypatch: pytest.MonkeyPatch, now: Now) -> None:
    monkeypatch.setenv("TZ", "Europe/Riga")
    watcher = ZoneWatcher(now)
    now.at += timedelta(minutes=1)
    assert watcher.check() is False
    assert watcher.check() is False
    assert watcher.zone_name == "Europe/Riga"


def test_a_new_zone_is_one_change(monkeypatch: pytest.MonkeyPatch, now: Now) -> None:
    monkeypatch.setenv("TZ", "Europe/Riga")
    watcher = ZoneWatcher(now)

    monkeypatch.setenv("TZ", "Asia/Tokyo")
    assert watcher.check() is True
    assert watcher.zone_name == "Asia/Tokyo"
    assert watcher.check() is False


def test_a_dst_transition_is_not_a_change(monkeypatch: pytest.MonkeyPatch, now: Now) -> None:
    # Europe/Riga moves from +02:00 to +03:00 at 2026-03-29 01:00 UTC.
    monkeypatch.setenv("TZ", "Europe/Riga")
    watcher = ZoneWatcher(now)
    now.at = datetime(2026, 3, 29, 1, 30, tzinfo=UTC)
    assert watcher.check() is False


def test_another_zone_under_the_same_name_is_a_change(
    monkeypatch: pytest.MonkeyPatch, now: Now, resolver: list[tzinfo]
) -> None:
    # A copied /etc/localtime or a Windows zone: the name cannot tell, the offset can.
    monkeypatch.setenv("TZ", "localtime")
    resolver.append(ZoneInfo("Europe/Riga"))
    watcher = ZoneWatcher(now)

    resolver.append(ZoneInfo("America/New_York"))
    assert watcher.check() is True
    assert watcher.check() is False
