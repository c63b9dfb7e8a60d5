"""A window and the user's absence in an export: every target names the window as a loss; Task
Scheduler says the absence with its idle settings (and pausing as a loss), the others name it."""

from __future__ import annotations

from datetime import time, timedelta

import pytest

from domi_desktop.errors import ExportError
from domi_desktop.export import ExportTarget, export_schedule
from domi_desktop.model import CommandAction, Conditions, OnReturn, Policies, Schedule, Window


def schedule(conditions: Conditions) -> Schedule:
    return Schedule(
        7, "Index", "@daily", "UTC", CommandAction(argv=("index",)),
        policies=Policies(conditions=conditions),
    )  # fmt: skip


@pytest.mark.parametrize("target", list(ExportTarget))
def test_a_window_is_named_as_a_loss_on_every_target(target: ExportTarget) -> None:
    nightly = schedule(Conditions(window=Window(time(22), time(6))))
    with pytest.raises(ExportError, match="the window 22:00-06:00"):
        export_schedule(nightly, target)
    assert any(
        "22:00-06:00" in item for item in export_schedule(nightly, target, lossy=True).dropped
    )


def test_task_scheduler_says_the_absence_with_its_idle_settings() -> None:
    away = schedule(Conditions(away=timedelta(minutes=15), on_return=OnReturn.stop))
    (task,) = export_schedule(away, ExportTarget.windows_task).files
    assert "<RunOnlyIfIdle>true</RunOnlyIfIdle>" in task.text
    assert "<Duration>PT15M</Duration>" in task.text
    assert "<StopOnIdleEnd>true</StopOnIdleEnd><RestartOnIdle>true</RestartOnIdle>" in task.text
    paused = schedule(Conditions(away=timedelta(minutes=15)))
    dropped = export_schedule(paused, ExportTarget.windows_task, lossy=True).dropped
    assert any(item.startswith("pausing the job when you come back") for item in dropped)


@pytest.mark.parametrize("target", [t for t in ExportTarget if t is not ExportTarget.windows_task])
def test_other_targets_name_the_absence_as_a_loss(target: ExportTarget) -> None:
    away = schedule(Conditions(away=timedelta(minutes=15), on_return=OnReturn.carry_on))
    with pytest.raises(ExportError, match="the wait for you to step away"):
        export_schedule(away, target)
