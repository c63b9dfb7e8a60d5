"""What the app tells the desktop, and when: a wake's late runs and catch-up bursts (one notice a
wake, as soon as its claims are on disk, or without their run ids after ``ANNOUNCE_WAIT_MS``),
failed and succeeded runs and the alerts' news, and a database that takes no writes."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Protocol

from PySide6.QtCore import QObject, QTimer

from domi_desktop.events import (
    AlertEvent,
    BurstEvent,
    Event,
    FireEvent,
    RunFinished,
    StoreProblem,
    WakeDecided,
)
from domi_desktop.model import RunStatus, WakeReason
from domi_desktop.platform.notify import Notice
from domi_desktop.scheduler.alerts import AlertNotice, NoticeKind
from domi_desktop.scheduler.decide import WakePlan
from domi_desktop.ui.history.texts import STATUS_LABELS, reason_words
from domi_desktop.ui.i18n import tr
from domi_desktop.ui.notices import alert_texts, burst_text, late_notice

LAST_LINE_LOOKS = 5
LAST_LINE_WAIT_MS = 200
ANNOUNCE_WAIT_MS = 500
"""How long a wake's notice waits for its claims to reach the disk (for run ids a click opens)
before it goes out without them: a slow disk after a resume must not delay it past a second."""


class Wishes(Protocol):
    """The settings the announcer reads (``frontdoor.settings.AppSettings``)."""

    notify_late: bool
    notify_failures: bool
    notify_successes: bool


class Announcer(QObject):
    def __init__(
        self,
        notify: Callable[[Notice], None],
        wishes: Callable[[], Wishes],
        attend: Callable[[], None],
        parent: QObject | None = None,
        last_line: Callable[[int], str | None] = lambda _run_id: None,
    ) -> None:
        """``notify`` shows a notice; ``wishes`` are the settings of the moment; ``attend`` is
        told when something wants the user's look (the icon says so)."""
        super().__init__(parent)
        self._notify = notify
        self._wishes = wishes
        self._attend = attend
        self._last_line = last_line
        """A run's last line of output (its stderr is in it), for a failure's notice."""
        self._late: list[FireEvent] = []
        self._burst: BurstEvent | None = None
        self._decided: WakeDecided | None = None
        """A wake's late runs, said before their claims are on disk: announced when they are,
        or after ``ANNOUNCE_WAIT_MS`` if the disk is slow (then a click opens the history)."""
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(ANNOUNCE_WAIT_MS)
        self._timer.timeout.connect(self._announce_decided)

    def on_event(self, event: Event) -> None:
        if isinstance(event, StoreProblem):
            self._attend()
            self._notify(Notice(tr("Cannot write to the database"), event.message, warning=True))
        elif isinstance(event, FireEvent):
            if event.late and event.skipped is None:
                self._late.append(event)
        elif isinstance(event, AlertEvent):
            self._alert(event)
        elif isinstance(event, BurstEvent):
            self._burst = event
        elif isinstance(event, WakeDecided):
            self._decided = event
            self._timer.start()
        elif isinstance(event, RunFinished):
            self._finished(event)

    def wake(self, plan: WakePlan, reason: WakeReason) -> None:
        """All catch-ups of one wake in one notice (a summary when the burst limit held some
        back). Claimed in time: the notice names the runs, and a click opens one. Said already
        (a slow disk) or nothing late: no notice here."""
        late, self._late = self._late, []
        burst, self._burst = self._burst, None
        decided, self._decided = self._decided, None
        self._timer.stop()
        if late or burst is not None:
            self._attend()
        if not self._wishes().notify_late or decided is None:
            return
        if burst is not None:
            self._burst_notice(burst)
        elif late:
            self._notify(late_notice(late, plan.now, WakeReason(reason)))

    def _announce_decided(self) -> None:
        """The claims of a wake's late runs are slow to reach the disk: say what the wake
        decided now, without run ids."""
        decided, self._decided = self._decided, None
        if decided is None:
            return
        self._attend()
        if not self._wishes().notify_late:
            return
        if decided.burst is not None:
            self._burst_notice(decided.burst)
        elif decided.late:
            self._notify(late_notice(list(decided.late), decided.late[0].fired_at, decided.reason))

    def _burst_notice(self, burst: BurstEvent) -> None:
        self._notify(Notice(burst_text(burst.total, burst.limit) or "", ""))

    def _finished(self, event: RunFinished) -> None:
        wishes = self._wishes()
        if event.status in (RunStatus.failed, RunStatus.timed_out):
            self._attend()
            # With alerts deciding (``alerted`` set), an AlertEvent follows when it is news.
            if wishes.notify_failures and event.alerted is None:
                body = (
                    reason_words(event.reason) if event.reason else tr(STATUS_LABELS[event.status])
                )
                self._failure(event.name, event.run_id, body)
        elif event.status is RunStatus.succeeded and wishes.notify_successes:
            self._notify(
                Notice(tr("Run succeeded: {name}", name=event.name), "", run_id=event.run_id)
            )
        elif waited_in_vain(event) and wishes.notify_failures:
            # A wait that ran out (a disk that never came): told once, as the schedule promised.
            self._attend()
            self._notify(
                Notice(tr("Did not run: {name}", name=event.name),
                       reason_words(event.reason or ""), warning=True, run_id=event.run_id)
            )  # fmt: skip

    def _failure(self, name: str, run_id: int, body: str, tries: int = 0) -> None:
        """A failure's notice with the last line the job printed: read from the store, where
        the run's end may land a moment after its event (a few looks, then without it)."""
        said = self._last_line(run_id)
        if said is None and tries < LAST_LINE_LOOKS:
            again = partial(self._failure, name, run_id, body, tries + 1)
            QTimer.singleShot(LAST_LINE_WAIT_MS, again)
            return
        if said:
            body = f"{body}\n{said}"
        self._notify(Notice(tr("Run failed: {name}", name=name), body, warning=True, run_id=run_id))

    def _alert(self, event: AlertEvent) -> None:
        """One notification per piece of news (``scheduler.alerts``); a new failure reads as
        the per-run notice always did."""
        kind = NoticeKind(event.notice)
        if kind is not NoticeKind.recovered:
            self._attend()
        wishes = self._wishes()
        if not wishes.notify_failures:
            return
        if kind is NoticeKind.failing and event.run_id is not None:
            body = reason_words(event.reason) if event.reason else event.error or ""
            self._failure(event.name, event.run_id, body)
            return
        if kind is NoticeKind.failing:
            title = tr("Run failed: {name}", name=event.name)
            body = reason_words(event.reason) if event.reason else event.error or ""
        else:
            notice = AlertNotice(kind, event.failures, event.error, event.stale_for)
            title, body = alert_texts(notice, event.name, event.schedule_id)
        warning = kind is not NoticeKind.recovered
        self._notify(Notice(title, body, warning=warning, run_id=event.run_id))


def waited_in_vain(event: RunFinished) -> bool:
    """A run skipped when its ``wait_at_most`` ran out (``scheduler.conditions.describe_gate``)."""
    return event.status is RunStatus.skipped and (event.reason or "").startswith(
        "skipped after waiting "
    )
