"""launchd export: a plist plistlib loads, with launchd.plist(5)'s keys only, whose calendar
intervals fire exactly when domi does (in UTC, where the Mac's zone is the schedule's)."""

from __future__ import annotations

import plistlib
import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from systemd_calendar import domi_fires, random_expression

from domi_desktop.cron import parse
from domi_desktop.export import ExportError, ExportTarget, export_schedule
from domi_desktop.model import CommandAction, Schedule

# launchd.plist(5): the keys a job may carry (the ones an export could need, and more).
DOCUMENTED = {
    "Label",
    "Disabled",
    "UserName",
    "GroupName",
    "Program",
    "ProgramArguments",
    "EnvironmentVariables",
    "WorkingDirectory",
    "StandardInPath",
    "StandardOutPath",
    "StandardErrorPath",
    "StartCalendarInterval",
    "StartInterval",
    "RunAtLoad",
    "KeepAlive",
    "TimeOut",
    "ExitTimeOut",
    "Umask",
    "Nice",
    "ProcessType",
    "AbandonProcessGroup",
}
CALENDAR_KEYS = {"Minute", "Hour", "Day", "Weekday", "Month"}


def _plist(expr: str, tz: str = "local", **action: Any) -> dict[str, Any]:
    argv = action.pop("argv", ("/usr/bin/true",))
    schedule = Schedule(3, "Sync", expr, tz, CommandAction(argv=argv, **action))
    (file,) = export_schedule(schedule, ExportTarget.launchd).files
    loaded = plistlib.loads(file.text.encode())
    assert isinstance(loaded, dict)
    return loaded


def _fires(intervals: list[dict[str, int]], start: datetime, count: int) -> list[datetime]:
    """launchd's reading: a dictionary matches when each key it has matches; the array is the
    union; Weekday 0 and 7 are Sunday."""
    found: list[datetime] = []
    at = start
    while len(found) < count:
        at += timedelta(minutes=1)
        values = {
            "Minute": at.minute,
            "Hour": at.hour,
            "Day": at.day,
            "Month": at.month,
            "Weekday": (at.weekday() + 1) % 7,
        }
        if any(
            all(values[k] == v % 7 if k == "Weekday" else values[k] == v for k, v in d.items())
            for d in intervals
        ):
            found.append(at)
    return found


def test_it_writes_a_plist_with_documented_keys_only() -> None:
    plist = _plist("0 9 * * 1-5", cwd="/tmp", env=(("A", "1"),), secret_env=(("T", "tok"),))
    assert set(plist) <= DOCUMENTED
    assert plist["Label"] == "org.domi-desktop.schedule.3"
    assert plist["WorkingDirectory"] == "/tmp"
    assert plist["EnvironmentVariables"] == {"A": "1"}
    assert (
        "security find-generic-password -s domi-desktop -a tok -w" in plist["ProgramArguments"][2]
    )
    for entry in plist["StartCalendarInterval"]:
        assert set(entry) <= CALENDAR_KEYS


@pytest.mark.slow  # tens of seconds of comparisons; make test runs it, make test-fast does not
def test_its_calendar_intervals_fire_when_domi_does() -> None:
    rng = random.Random(5)
    checked = 0
    while checked < 60:
        expr = random_expression(rng)
        try:
            plist = _plist(expr.text)
        except ExportError:
            continue  # an AND of two restricted day fields, or too many dictionaries
        intervals = plist["StartCalendarInterval"]
        intervals = intervals if isinstance(intervals, list) else [intervals]
        base = datetime(2025, 1, 1, tzinfo=UTC) + timedelta(days=rng.randrange(365))
        expected = domi_fires(expr, "UTC", base, 20)
        if expected[-1] - base > timedelta(days=60):
            continue  # rare expressions: the minute-by-minute reading here would be slow
        assert _fires(intervals, base, 20) == expected, expr.text
        checked += 1


def test_it_refuses_a_zone_unless_lossy() -> None:
    schedule = Schedule(3, "Sync", "0 9 * * *", "Europe/Riga", CommandAction(argv=("/bin/true",)))
    with pytest.raises(ExportError, match="launchd has no zones"):
        export_schedule(schedule, ExportTarget.launchd)
    export = export_schedule(schedule, ExportTarget.launchd, lossy=True)
    assert export.dropped and "Europe/Riga" in export.dropped[0]


def test_it_refuses_an_and_of_two_restricted_day_fields_even_when_lossy() -> None:
    assert not parse("0 9 */2 * 1").dom_dow_or
    schedule = Schedule(3, "Sync", "0 9 */2 * 1", "local", CommandAction(argv=("/bin/true",)))
    with pytest.raises(ExportError, match="AND a weekday"):
        export_schedule(schedule, ExportTarget.launchd, lossy=True)
