"""What the conditions' keeper watches for resources: the source told what the waiting and running jobs
need watched (a disk, a named network, a path) and nothing else, and a job told where its disk is.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from domi_desktop.model import Action, CommandAction, Schedule, SystemState, Wanted
from domi_desktop.ports import ConditionSource, ResourceWatch
from domi_desktop.scheduler.resources import job_environment, wanted


class ResourceWants:
    def __init__(self, source: ConditionSource | None) -> None:
        self._source = source if isinstance(source, ResourceWatch) else None
        self.told = Wanted()

    def tell(self, schedules: Iterable[Schedule]) -> bool:
        """The source watches what ``schedules`` need; True when that changed what it reads."""
        needed = wanted(schedule.policies.conditions for schedule in schedules)
        if needed == self.told:
            return False
        self.told = needed
        if self._source is not None:
            self._source.want(needed)
        return True


def job_action(schedule: Schedule, state: SystemState) -> Action:
    """The schedule's action, its job told the mount point of the disk it waited for."""
    action = schedule.action
    extra = job_environment(schedule.policies.conditions, state)
    if not extra or not isinstance(action, CommandAction):
        return action
    return replace(action, env=action.env + extra)
