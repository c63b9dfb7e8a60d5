from __future__ import annotations

import importlib
import logging
import sys
import types
from datetime import UTC, datetime, timedelta
from importlib.resources import files
from pathlib import Path
from typing import cast
from zoneinfo import ZoneInfo

import pytest
import tzlocal
import tzlocal.unix

from domi_desktop.cron import next_run
from domi_desktop.platform import timezone
from domi_desktop.platform.timezone import (
    UNKNOWN_ZONE_NAME,
    OsZone,
    ZoneSource,
    ZoneWatcher,
    current_os_zone,
    local_zone_name,
    read_os_zone,
)


class Now:
    def __init__(self, at: datetime) -> None:
        self.at = at

    def __call__(self) -> datetime:
        return self.at


@pytest.fixture
def now() -> Now:
    return Now(datetime(2026, 3, 28, 12, 0, tzinfo=UTC))


@pytest.fixture
def root(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """An empty file system root for tzlocal, and no TZ variable: the OS says nothing."""
    monkeypatch.delenv("TZ", raising=False)
    for function in (tzlocal.unix._get_localzone_name, tzlocal.unix._get_localzone):
        monkeypatch.setattr(function, "__defaults__", (str(tmp_path),))
    (tmp_path / "etc").mkdir()
    return tmp_path


def zone_file(name: str) -> Path:
    path = files("tzdata.zoneinfo").joinpath(name)
    assert isinstance(path, Path)
    return path


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


def test_another_zone_under_the_same_name_is_a_change(now: Now) -> None:
    # A copied /etc/localtime: no name to tell, the offset can.
    zones = [OsZone(ZoneInfo("Europe/Riga"), None)]
    watcher = ZoneWatcher(now, lambda: zones[-1])

    zones.append(OsZone(ZoneInfo("America/New_York"), None))
    assert watcher.check() is True
    assert watcher.check() is False


def test_local_follows_the_tz_variable_at_each_evaluation(monkeypatch: pytest.MonkeyPatch) -> None:
    when = datetime(2024, 6, 1, tzinfo=UTC)
    monkeypatch.setenv("TZ", "Asia/Shanghai")
    assert local_zone_name() == "Asia/Shanghai"
    first = next_run("0 9 * * *", when, "local")
    monkeypatch.setenv("TZ", "Europe/Riga")
    second = next_run("0 9 * * *", when, "local")
    assert first is not None and second is not None
    assert first.isoformat() == "2024-06-01T09:00:00+08:00"
    assert second.isoformat() == "2024-06-01T09:00:00+03:00"


@pytest.mark.posix_only  # tzlocal's POSIX reader: files under a root
def test_an_os_that_names_no_zone_is_utc_visibly_not_silently(
    root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        os_zone = read_os_zone()
    assert os_zone.name == UNKNOWN_ZONE_NAME == "UTC (OS zone unknown)"
    moment = datetime(2024, 6, 1, 9, 0, tzinfo=os_zone.zone)
    assert moment.utcoffset() == timedelta(0)
    assert moment.tzname() == UNKNOWN_ZONE_NAME  # shown wherever a fire's zone is printed
    assert "the OS time zone cannot be determined" in caplog.text


@pytest.mark.posix_only  # a POSIX TZ rule; Windows' twin: an unknown registry zone
def test_a_tz_that_tzlocal_cannot_read_is_utc_visibly(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("TZ", "EST5EDT,M3.2.0,M11.1.0")  # a POSIX rule, not a zone name
    with caplog.at_level(logging.WARNING):
        assert local_zone_name() == UNKNOWN_ZONE_NAME
    assert "EST5EDT" in caplog.text


@pytest.mark.posix_only  # /etc/localtime
def test_a_linked_localtime_gives_the_zone_name_as_on_macos(root: Path) -> None:
    # macOS: /etc/localtime -> /var/db/timezone/zoneinfo/Europe/Berlin
    (root / "etc" / "localtime").symlink_to(zone_file("Europe/Berlin"))
    os_zone = read_os_zone()
    assert os_zone.name == "Europe/Berlin"
    assert os_zone.zone == ZoneInfo("Europe/Berlin")


@pytest.mark.posix_only  # /etc/localtime
def test_a_copied_localtime_is_the_zone_without_a_name(root: Path) -> None:
    (root / "etc" / "localtime").write_bytes(zone_file("Asia/Tokyo").read_bytes())
    os_zone = read_os_zone()
    assert os_zone.name is None
    assert datetime(2024, 1, 1, tzinfo=os_zone.zone).utcoffset() == timedelta(hours=9)


@pytest.mark.posix_only  # TZ naming a file: tzlocal reads it on POSIX only
def test_a_tz_naming_a_zone_file_outside_the_database_is_that_zone(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    custom = tmp_path / "office-zone"
    custom.write_bytes(zone_file("Asia/Kolkata").read_bytes())
    monkeypatch.setenv("TZ", str(custom))
    os_zone = read_os_zone()
    assert datetime(2024, 1, 1, tzinfo=os_zone.zone).utcoffset() == timedelta(hours=5, minutes=30)


def test_a_windows_zone_name_is_mapped_to_its_iana_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """tzlocal's Windows reader, driven through a fake registry."""
    monkeypatch.delenv("TZ", raising=False)
    monkeypatch.setitem(sys.modules, "winreg", fake_winreg("W. Europe Standard Time"))
    monkeypatch.delitem(sys.modules, "tzlocal.win32", raising=False)
    source: ZoneSource = cast(ZoneSource, importlib.import_module("tzlocal.win32"))
    os_zone = read_os_zone(source)
    assert os_zone.name == "Europe/Berlin"
    assert os_zone.zone == ZoneInfo("Europe/Berlin")


def test_a_registry_zone_windows_does_not_map_is_utc_visibly(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The Windows twin of a TZ tzlocal cannot read."""
    monkeypatch.delenv("TZ", raising=False)
    monkeypatch.setitem(sys.modules, "winreg", fake_winreg("Nowhere Standard Time"))
    monkeypatch.delitem(sys.modules, "tzlocal.win32", raising=False)
    source: ZoneSource = cast(ZoneSource, importlib.import_module("tzlocal.win32"))
    with caplog.at_level(logging.WARNING):
        os_zone = read_os_zone(source)
    assert os_zone.name == UNKNOWN_ZONE_NAME
    assert datetime(2024, 6, 1, tzinfo=os_zone.zone).utcoffset() == timedelta(0)
    assert "Nowhere Standard Time" in caplog.text


def fake_winreg(key_name: str) -> types.ModuleType:
    values = [("TimeZoneKeyName", key_name + "\x00\x00"), ("DynamicDaylightTimeDisabled", 0)]

    class Key:
        def Close(self) -> None:
            pass

    module = types.ModuleType("winreg")
    module.__dict__.update(
        HKEY_LOCAL_MACHINE=object(),
        ConnectRegistry=lambda _machine, _hive: object(),
        OpenKey=lambda _handle, _path: Key(),
        QueryInfoKey=lambda _key: (0, len(values), 0),
        EnumValue=lambda _key, index: (*values[index], 1),
    )
    return module


def test_the_zone_is_read_again_only_when_its_inputs_change(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reads: list[str] = []
    real = read_os_zone

    def counting() -> OsZone:
        reads.append("read")
        return real()

    monkeypatch.setattr("domi_desktop.platform.timezone.read_os_zone", counting)
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    assert current_os_zone().name == "Asia/Tokyo"
    assert current_os_zone().name == "Asia/Tokyo"
    assert len(reads) == 1
    monkeypatch.setenv("TZ", "Europe/Riga")
    assert current_os_zone().name == "Europe/Riga"
    assert len(reads) == 2


def test_on_windows_the_zone_is_read_again_only_after_windows_says_something_changed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Read afresh at every resolution it cost 228 ms a call under Wine, thousands a repaint.
    reads: list[str] = []

    def counting() -> OsZone:
        reads.append("read")
        return OsZone(ZoneInfo("Asia/Tokyo"), "Asia/Tokyo")

    monkeypatch.setattr(timezone, "read_os_zone", counting)
    monkeypatch.setattr(timezone, "_last", None)
    monkeypatch.setattr(timezone, "WINDOWS_TRUSTED_FOR", 1e9)
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.delenv("TZ", raising=False)
    for _ in range(3):
        assert current_os_zone().name == "Asia/Tokyo"
    assert len(reads) == 1
    timezone.windows_settings_changed()
    current_os_zone()
    current_os_zone()
    assert len(reads) == 2


@pytest.mark.windows_only
def test_the_registry_zone_is_read_once_and_again_after_a_time_change_broadcast(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("TZ", raising=False)
    monkeypatch.setattr(timezone, "_last", None)
    monkeypatch.setattr(timezone, "WINDOWS_TRUSTED_FOR", 1e9)
    real, reads = timezone.read_os_zone, []

    def counting() -> OsZone:
        reads.append("read")
        return real()

    monkeypatch.setattr(timezone, "read_os_zone", counting)
    first = current_os_zone()
    assert first.name is not None and first.name != UNKNOWN_ZONE_NAME  # the registry named it
    assert current_os_zone() == first
    assert len(reads) == 1
    timezone.windows_settings_changed()
    assert current_os_zone() == first
    assert len(reads) == 2
