"""A one-off exported: one instant for systemd (checked with systemd-analyze) and Task
Scheduler, refused with the reason where the target can only repeat; and carried by domi's own
export document."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from systemd_calendar import systemd_elapses
from test_systemd import needs_systemd
from test_windows_task import schema  # noqa: F401  (the fixture)

from domi_desktop.errors import ExportError
from domi_desktop.export import ExportTarget, export_schedule
from domi_desktop.frontdoor.portable import export_document, parse_document, schedule_from_json
from domi_desktop.model import CommandAction, Policies, Schedule
from domi_desktop.scheduler.oneoff import once_at_from

NOW = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)


def one_off(tz: str = "Europe/Riga") -> Schedule:
    at, expr = once_at_from(datetime(2026, 12, 24, 7, 0), tz, NOW)
    return Schedule(
        1, "Gifts", expr, tz, CommandAction(argv=("/bin/true",)), policies=Policies(once_at=at)
    )


def test_systemd_gets_one_calendar_instant_and_catches_up() -> None:
    (timer, _service) = export_schedule(one_off(), ExportTarget.systemd).files
    lines = timer.text.splitlines()
    assert [line for line in lines if line.startswith("OnCalendar=")] == [
        "OnCalendar=2026-12-24 05:00:00 UTC"
    ]
    assert "Persistent=true" in lines


@needs_systemd
def test_systemd_fires_the_exported_one_off_once_at_its_instant() -> None:
    (timer, _service) = export_schedule(one_off(), ExportTarget.systemd).files
    spec = next(line for line in timer.text.splitlines() if line.startswith("OnCalendar="))
    (elapses,) = systemd_elapses([spec.removeprefix("OnCalendar=")], NOW)
    assert elapses == [datetime(2026, 12, 24, 5, 0, tzinfo=UTC)]


def test_task_scheduler_gets_a_time_trigger() -> None:
    (task,) = export_schedule(one_off(), ExportTarget.windows_task).files
    assert "<TimeTrigger><Enabled>true</Enabled><StartBoundary>2026-12-24T05:00:00Z" in task.text
    assert "CalendarTrigger" not in task.text


@pytest.mark.parametrize(
    ("target", "why"),
    [
        (ExportTarget.launchd, "launchd has no one-time trigger"),
        (ExportTarget.crontab, "a cron line repeats every year"),
        (ExportTarget.k8s, "a CronJob repeats every year"),
    ],
)
def test_targets_that_only_repeat_refuse_a_one_off_with_the_reason(
    target: ExportTarget, why: str
) -> None:
    for lossy in (False, True):
        with pytest.raises(ExportError, match=why):
            export_schedule(one_off(), target, lossy=lossy)


def test_domi_s_own_export_carries_the_one_off() -> None:
    schedule = one_off()
    (portable,) = parse_document(export_document([schedule]))
    assert portable.policies.once_at == schedule.policies.once_at
    shown = {**export_document([schedule])["schedules"][0], "id": 1}
    assert schedule_from_json(shown).policies.once_at == schedule.policies.once_at


def background(expr: str = "0 3 * * *") -> Schedule:
    return Schedule(
        2,
        "Backup",
        expr,
        "UTC",
        CommandAction(argv=("/usr/bin/backup",)),
        policies=Policies(background=True),
    )


def test_background_maps_to_each_target_s_own_priority() -> None:
    (_timer, service) = export_schedule(background(), ExportTarget.systemd).files
    assert {"Nice=19", "IOSchedulingClass=idle"} <= set(service.text.splitlines())
    (plist,) = export_schedule(background(), ExportTarget.launchd, lossy=True).files
    assert "<key>ProcessType</key>\n\t<string>Background</string>" in plist.text
    assert "<key>LowPriorityIO</key>\n\t<true/>" in plist.text
    (task,) = export_schedule(background(), ExportTarget.windows_task).files
    assert "<Priority>10</Priority>" in task.text
    lossy = export_schedule(background(), ExportTarget.crontab, lossy=True)
    assert "nice -n 19 " in lossy.files[0].text and any("ionice" in d for d in lossy.dropped)


def test_the_one_off_and_background_tasks_follow_the_task_scheduler_schema(
    schema: Any,  # noqa: F811
) -> None:
    for schedule in (one_off("UTC"), background()):
        (task,) = export_schedule(schedule, ExportTarget.windows_task).files
        schema.validate(task.text)
