"""A schedule that its session's moments alone run (an imported ``@reboot``, the editor's "Only
then, not by its time") is exported as the target's login trigger, or refused with the reason:
never as its unused expression (``@yearly``, on 1 January)."""

from __future__ import annotations

import plistlib

import pytest

from domi_desktop.errors import ExportError
from domi_desktop.export import ExportTarget, export_schedule
from domi_desktop.model import CommandAction, Policies, Schedule, SessionTriggers

AGENT = Schedule(
    7, "Agent", "@yearly", "Europe/Riga", CommandAction(shell="/usr/local/bin/start-agent"),
    policies=Policies(session=SessionTriggers(at_login=True, only=True)),
)  # fmt: skip
AT_UNLOCK_ONLY = Schedule(
    8, "Unlock", "@yearly", "local", CommandAction(argv=("true",)),
    policies=Policies(session=SessionTriggers(at_unlock=True, only=True)),
)  # fmt: skip
ALSO_AT_LOGIN = Schedule(
    9, "Report", "0 9 * * *", "local", CommandAction(argv=("report",)),
    policies=Policies(session=SessionTriggers(at_login=True)),
)  # fmt: skip


def test_systemd_starts_it_with_the_users_service_manager_and_writes_no_timer() -> None:
    exported = export_schedule(AGENT, ExportTarget.systemd)
    (service,) = exported.files
    assert service.name == "domi-7-agent.service"
    assert "\n[Install]\n" in service.text
    assert service.text.endswith("\nWantedBy=default.target\n")
    assert "OnCalendar" not in service.text and exported.dropped == ()


def test_a_systemd_system_unit_cannot_start_at_a_login_and_says_so() -> None:
    with pytest.raises(ExportError, match="only at the session triggers at_login, which systemd"):
        export_schedule(AGENT, ExportTarget.systemd, system=True, lossy=True)


def test_launchd_runs_it_when_the_agent_loads_at_login() -> None:
    exported = export_schedule(AGENT, ExportTarget.launchd)
    plist = plistlib.loads(exported.files[0].text.encode())
    assert plist["RunAtLoad"] is True
    assert "StartCalendarInterval" not in plist
    assert exported.dropped == ()  # its zone is of no matter: it runs at no time


def test_task_scheduler_gets_a_logon_trigger_and_no_calendar() -> None:
    exported = export_schedule(AGENT, ExportTarget.windows_task)
    xml = exported.files[0].text
    assert "<Triggers><LogonTrigger><Enabled>true</Enabled></LogonTrigger></Triggers>" in xml
    assert "CalendarTrigger" not in xml and exported.dropped == ()


def test_crontab_writes_reboot_only_when_told_that_boot_is_not_login() -> None:
    with pytest.raises(ExportError, match="cron runs an @reboot line when cron itself starts"):
        export_schedule(AGENT, ExportTarget.crontab)
    exported = export_schedule(AGENT, ExportTarget.crontab, lossy=True)
    lines = exported.files[0].text.splitlines()
    assert lines[-1] == "@reboot flock -n /tmp/domi-7.lock /bin/sh -c /usr/local/bin/start-agent"
    assert not any(line.startswith("@yearly") for line in lines)


def test_kubernetes_has_no_session_and_refuses_even_when_lossy() -> None:
    with pytest.raises(ExportError, match="only at the session triggers at_login, which k8s"):
        export_schedule(AGENT, ExportTarget.k8s, lossy=True)


@pytest.mark.parametrize("target", list(ExportTarget))
def test_a_moment_no_target_can_start_a_job_at_is_refused_even_when_lossy(
    target: ExportTarget,
) -> None:
    with pytest.raises(ExportError, match="only at the session triggers at_unlock"):
        export_schedule(AT_UNLOCK_ONLY, target, lossy=True)


def test_also_at_login_adds_the_login_trigger_to_the_calendar() -> None:
    plist = plistlib.loads(
        export_schedule(ALSO_AT_LOGIN, ExportTarget.launchd).files[0].text.encode()
    )
    assert plist["RunAtLoad"] is True
    assert plist["StartCalendarInterval"] == {"Hour": 9, "Minute": 0}
    xml = export_schedule(ALSO_AT_LOGIN, ExportTarget.windows_task).files[0].text
    assert "<CalendarTrigger>" in xml and "<LogonTrigger>" in xml
