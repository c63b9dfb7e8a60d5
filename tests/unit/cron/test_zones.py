from __future__ import annotations

import zoneinfo
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from domi_desktop.cron import (
    ZoneError,
    known_zone,
    local_zone,
    next_run,
    set_local_resolver,
    zone_for,
)
from domi_desktop.cron._eval import FAST_PATH_SPAN


def test_no_zone_reverts_an_offset_change_within_the_fast_path_span() -> None:
    """The fast path of next_run/prev_run relies on this property of the tz database."""
    from zoneinfo._zoneinfo import ZoneInfo as PureZoneInfo  # its transitions are readable

    shortest = (timedelta.max, "")
    for name in zoneinfo.available_timezones():
        zone = PureZoneInfo.no_cache(name)
        moments = zone._trans_utc  # type: ignore[attr-defined]
        offsets = [zone._tti_before.utcoff] + [t.utcoff for t in zone._ttinfos]  # type: ignore[attr-defined]
        for i in range(len(moments)):
            if offsets[i + 1] == offsets[i]:
                continue
            for j in range(i + 1, len(moments)):
                span = timedelta(seconds=moments[j] - moments[i])
                if span > 2 * FAST_PATH_SPAN:
                    break
                if offsets[j + 1] == offsets[i] and span < shortest[0]:
                    shortest = (span, name)
    # With equal offsets at both ends, wall-clock and absolute spans are equal; keep a margin.
    assert shortest[0] > FAST_PATH_SPAN + timedelta(hours=12), shortest


def test_unknown_zones_are_refused_with_a_hint() -> None:
    with pytest.raises(ZoneError, match="unknown time zone 'Mars/Olympus'"):
        zone_for("Mars/Olympus")
    with pytest.raises(ZoneError, match="did you mean 'Europe/Riga'"):
        zone_for("europe/riga")
    for hostile in ["", "../../etc/passwd", "/etc/localtime", "a\x00b", "x" * 300]:
        with pytest.raises(ZoneError):
            zone_for(hostile)


def test_a_bad_zone_in_next_run_is_a_zone_error() -> None:
    with pytest.raises(ZoneError):
        next_run("* * * * *", datetime(2024, 1, 1, tzinfo=UTC), "Nowhere/Land")


def test_local_asks_the_installed_resolver_at_each_evaluation() -> None:
    when = datetime(2024, 6, 1, tzinfo=UTC)
    zones = [ZoneInfo("Asia/Shanghai")]
    set_local_resolver(lambda: zones[-1])
    first = next_run("0 9 * * *", when, "local")
    zones.append(ZoneInfo("Europe/Riga"))  # the laptop flew to Riga
    second = next_run("0 9 * * *", when, "local")
    assert first is not None and second is not None
    assert first.isoformat() == "2024-06-01T09:00:00+08:00"
    assert second.isoformat() == "2024-06-01T09:00:00+03:00"


def test_local_never_reads_the_os_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a resolver, ``local`` is an error that says so, not a guess from TZ or /etc."""
    monkeypatch.setenv("TZ", "Asia/Shanghai")
    set_local_resolver(None)
    with pytest.raises(ZoneError, match=r"OS time zone .* is not known"):
        local_zone()
    with pytest.raises(ZoneError, match="OS time zone"):
        next_run("0 9 * * *", datetime(2024, 6, 1, tzinfo=UTC), "local")
    assert known_zone("local")


def test_the_core_modules_read_no_environment_and_no_files() -> None:
    from domi_desktop import cron

    sources = [path.read_text(encoding="utf-8") for path in Path(cron.__file__).parent.glob("*.py")]
    for banned in ("os.environ", "import os", "open(", "Path(", "readlink", "/etc/"):
        assert not any(banned in source for source in sources), banned


def test_tzinfo_objects_pass_through() -> None:
    zone = ZoneInfo("Asia/Shanghai")
    assert zone_for(zone) is zone
