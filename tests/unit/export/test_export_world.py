"""Resource conditions and session triggers have no counterpart in a server's scheduler: an export
names them and needs --lossy, on every target."""

from __future__ import annotations

import pytest

from domi_desktop.errors import ExportError
from domi_desktop.export import ExportTarget, export_schedule
from domi_desktop.model import CommandAction, Conditions, Policies, Schedule, SessionTriggers

BACKUP = Schedule(
    3, "Backup", "0 0 * * *", "UTC", CommandAction(argv=("backup",)),
    policies=Policies(
        conditions=Conditions(volume="Backup"), session=SessionTriggers(at_unlock=True)
    ),
)  # fmt: skip


@pytest.mark.parametrize("target", list(ExportTarget))
def test_a_disk_and_a_trigger_are_named_and_dropped_only_when_asked(target: ExportTarget) -> None:
    with pytest.raises(ExportError) as refused:
        export_schedule(BACKUP, target)
    assert "the wait for the disk Backup" in str(refused.value)
    assert "the session triggers at_unlock" in str(refused.value)
    exported = export_schedule(BACKUP, target, lossy=True)
    assert "the wait for the disk Backup" in exported.dropped
