"""Runs outside the calendar: a user's Run now and a session trigger's run (at login, at
unlock...), within the schedule's overlap policy, and the re-run of a run whose process (or whose
machine's lease) died. Each is recorded and started in
one write of the recorder, and its lane counts it busy from the moment it is handed over (a wake
in between must not start a second copy beside it). And a run stopped before its end."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Protocol

from domi_desktop.actions import ActionResult
from domi_desktop.errors import BusyError, DomiError
from domi_desktop.events import Event
from domi_desktop.model import RunStatus, Trigger
from domi_desktop.ports import Clock
from domi_desktop.runtime.lanes import Active, Admission, Lanes, lane_key, manual_event
from domi_desktop.runtime.recorder import Recorder
from domi_desktop.store import Store
from domi_desktop.store.claims import Start
from domi_desktop.store.writer import Writer

log = logging.getLogger(__name__)


class ManualHost(Protocol):
    """What manual runs need of the runtime that owns them (``engine.Runtime``)."""

    clock: Clock
    store: Store
    recorder: Recorder
    lanes: Lanes

    def emit(self, event: Event) -> None: ...

    def run_action(self, active: Active, log_path: Path, leased_at: datetime) -> None: ...

    def finished(self, run_id: int, result: ActionResult) -> None: ...


class ManualRuns:
    def __init__(self, runtime: ManualHost) -> None:
        self._rt = runtime

    def resume(self, schedule_id: int, run_id: int) -> None:
        """Run once more a run that was interrupted: its job died with the app, its machine
        vanished, or the warden stopped it (the store refuses a second re-run of one run)."""

        def resumed(outcome: int | Exception) -> None:
            if isinstance(outcome, Exception):
                log.warning("run %s was interrupted and cannot be resumed: %s", run_id, outcome)
            else:
                log.info("run %s was interrupted; re-running it as run %s", run_id, outcome)

        self.run(schedule_id, Trigger.resumed, run_id, resumed)

    def stop(self, run_id: int, reason: str) -> bool:
        """Stop a run in progress (its whole process tree); False when it is not running here.

        The runner reports the stopped result as usual, so ``RunFinished`` follows. A run still
        waiting for its jitter delay or a retry has no process: it is recorded as stopped now.
        """
        active = self._rt.lanes.holding(run_id)
        if active is None:
            return False
        if active.handle is not None and active.handle.wait(0) is None:
            active.handle.stop(reason)
        else:
            now = self._rt.clock.now()
            stopped = ActionResult(
                RunStatus.interrupted, reason, None, "",
                self._rt.store.log_path_for(run_id), active.started_at or now, now,
            )  # fmt: skip
            active.attempt = active.schedule.policies.retries  # no retry after a stop
            self._rt.finished(run_id, stopped)
        return True

    def run(
        self,
        schedule_id: int,
        trigger: Trigger,
        resumed_from: int | None,
        done: Callable[[int | Exception], None] | None,
    ) -> None:
        """The run recorded and started in one write of the recorder, then its action. A manual
        run follows the schedule's overlap policy; a resumed one continues a run that died."""

        def answer(outcome: int | Exception) -> None:
            if done is not None:
                done(outcome)

        try:
            schedule = self._rt.store.get_schedule(schedule_id)
        except DomiError as error:
            answer(error)
            return
        key = lane_key(schedule)
        asked = trigger is not Trigger.resumed
        lanes = self._rt.lanes
        if asked and lanes.admit(schedule, may_queue=False) is Admission.busy:
            overlap = schedule.policies.overlap.value
            answer(BusyError(f"{schedule.name} is still running (if still running: {overlap})"))
            return
        lane = lanes.reserve(schedule)
        now = self._rt.clock.now()
        start = Start(0, now, None)

        def recorded(outcome: int | Exception) -> None:
            lanes.recorded(lane, key)
            if isinstance(outcome, Exception):
                answer(outcome)
                return
            active = Active(outcome, schedule, trigger, started_at=now)
            lanes[key] = lane
            lanes.start(lane, active, replacing=asked)
            self._rt.emit(manual_event(schedule, outcome, trigger, now))
            self._rt.run_action(active, self._rt.store.log_path_for(outcome), now)
            answer(outcome)

        self._rt.recorder.submit(
            lambda writer: _record(
                self._rt.store, writer, schedule_id, now, trigger, resumed_from, start
            ),
            recorded,
        )


def _record(
    store: Store,
    writer: Writer,
    schedule_id: int,
    now: datetime,
    trigger: Trigger,
    resumed_from: int | None,
    start: Start,
) -> int:
    """On the recorder: the run's row, started with the path of its own log."""
    run_id = writer.record_manual(schedule_id, now, trigger, resumed_from)
    log_path = str(store.log_path_for(run_id))
    writer.start([replace(start, run_id=run_id, log_path=log_path)])
    return run_id
