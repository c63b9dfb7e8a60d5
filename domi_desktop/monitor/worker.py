"""The threads that tell the monitors: each target's intents in order, independently of the others.

Nothing here runs on the loop (GUI) thread or a job's: ``submit`` only appends to a list under a
lock. The intents of one target (a check, a ping URL, a webhook) form a lane: in order, so a pause
never overtakes the pings before it, and a target that cannot be reached holds its own lane only,
tried again after 1 s, 2 s, 4 s... up to 5 minutes, or at once after a wake. One thread keeps the
spool and the lanes; a few senders carry the requests, so a monitor slow to answer (each request
ends by its deadline) holds one sender, never the others' pings.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

from domi_desktop.actions.capture import HELD_SECRETS
from domi_desktop.errors import SecretError
from domi_desktop.monitor.intents import Intent, Kind
from domi_desktop.monitor.spool import SPOOL_FILENAME, Spool
from domi_desktop.monitor.status import (
    CheckState,
    PingKind,
    PingTrial,
    delivered_kind,
    state_after,
)
from domi_desktop.monitor.transport import (
    BODY_LIMIT,
    CHECKS_FILENAME,
    Cancel,
    CheckBook,
    MonitorError,
    Refused,
    Unreachable,
    ping,
    send,
)
from domi_desktop.ports import SecretStore
from domi_desktop.secrets import Masker

log = logging.getLogger(__name__)

FIRST_BACKOFF = 1.0
LAST_BACKOFF = 300.0
SENDERS = 4
"""Requests in flight at once, each to its own target."""


def lane_of(intent: Intent) -> str:
    """The target whose intents keep their order: a check, or a URL."""
    if intent.check is not None:
        return f"check {intent.check.api.rstrip('/')} {intent.check.name}"
    if intent.url is not None:
        return f"{intent.kind.value} {intent.url}"
    return intent.kind.value


@dataclass
class Lane:
    """One target's intents waiting, and how its last try went."""

    what: str
    waiting: deque[tuple[int, Intent]] = field(default_factory=deque)
    busy: bool = False
    retry_at: float = 0.0
    backoff: float = FIRST_BACKOFF
    last_delivered: float | None = None
    """``time.time()`` of its last delivery."""
    last_error: str | None = None
    """Why its last try failed; None once one went through."""
    last_kind: PingKind | None = None
    last_ping: float | None = None
    """``time.time()`` of the last ping it took (a check made or updated is none)."""
    state: CheckState = CheckState.unknown
    """The target's state as its deliveries made it (a check's)."""


@dataclass(frozen=True, slots=True)
class LaneState:
    what: str
    waiting: int
    last_delivered: float | None
    last_error: str | None
    key: str = ""
    """``lane_of`` its intents."""
    last_kind: PingKind | None = None
    last_ping: float | None = None
    state: CheckState = CheckState.unknown


TrialDone = Callable[[PingTrial], None]


class Worker:
    def __init__(
        self,
        data_dir: Path,
        secrets: SecretStore,
        output_of: Callable[[int], str | None],
    ) -> None:
        """``output_of(run_id)``: a finished run's output tail as recorded (masked), read on
        the worker's thread."""
        self._secrets = secrets
        self._output_of = output_of
        self._spool_path = data_dir / SPOOL_FILENAME
        self._checks = CheckBook(data_dir / CHECKS_FILENAME)
        self._incoming: list[Intent] = []
        self._results: list[tuple[str, int, Exception | None]] = []
        self._jobs: deque[tuple[str, int, Intent]] = deque()
        self._tests: deque[tuple[Intent, datetime, TrialDone]] = deque()
        """Test pings: sent at once by the next free sender, never spooled."""
        self._lanes: dict[str, Lane] = {}
        self._lock = threading.Condition()
        self._stopping = False
        self._kicked = False
        self._dropping = False
        self._idle = False
        """Nothing left to send; False until the worker has read the spool a previous run left."""
        self._waiters: list[tuple[float, Callable[[bool], None]]] = []
        self._threads: list[threading.Thread] = []
        self._cancels: list[Cancel] = []
        self._keys: dict[str, str] = {}
        """API keys by secret name, as read from the secret store."""
        self.delivered = 0
        self.refused = 0

    def start(self) -> None:
        self._threads = [threading.Thread(target=self._run, name="domi-monitor")]
        for index in range(SENDERS):
            cancel = Cancel()
            self._cancels.append(cancel)
            self._threads.append(
                threading.Thread(
                    target=self._send_loop, args=(cancel,), name=f"domi-monitor-send-{index}"
                )
            )
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        """What is not delivered stays in the spool for the next start; requests in flight are
        ended, not waited for."""
        with self._lock:
            self._stopping = True
            self._lock.notify_all()
        for cancel in self._cancels:
            cancel.cancel()
        for thread in self._threads:
            thread.join()
        self._threads = []
        self._cancels = []
        for _intent, sent_at, done in self._tests:
            done(PingTrial(sent_at, error="the app is quitting"))
        self._tests.clear()

    def submit(self, intents: list[Intent]) -> None:
        if not intents:
            return
        with self._lock:
            self._incoming.extend(intents)
            self._idle = False
            self._lock.notify_all()

    def drop_pauses(self, *, retry_now: bool = True) -> None:
        """Pauses not sent yet go (sent after the sleep began, they would only silence their
        checks until each one's next run); with ``retry_now`` (the machine is awake again) what
        waits for a retry is tried now."""
        with self._lock:
            self._dropping = True
            self._kicked = self._kicked or retry_now
            self._lock.notify_all()

    def drained(self, timeout: float) -> bool:
        """Wait until everything submitted so far was delivered (or refused); False on timeout."""
        with self._lock:
            return self._lock.wait_for(lambda: self._idle or self._stopping, timeout)

    def when_drained(self, budget: float, done: Callable[[bool], None]) -> None:
        """``done(True)`` on the worker's thread once everything submitted so far is delivered
        (or refused), or ``done(False)`` after ``budget`` seconds (or at a stop)."""
        with self._lock:
            self._waiters.append((time.monotonic() + budget, done))
            self._lock.notify_all()

    def lanes(self) -> list[LaneState]:
        """Each target's state: what waits, the last delivery, the last error."""
        with self._lock:
            return [LaneState(lane.what, len(lane.waiting), lane.last_delivered, lane.last_error,
                              key, lane.last_kind, lane.last_ping, lane.state)
                    for key, lane in self._lanes.items()]  # fmt: skip

    @property
    def checks(self) -> CheckBook:
        return self._checks

    def test(self, intent: Intent, sent_at: datetime, done: TrialDone) -> None:
        """Send ``intent`` (a ping) now, beside its target's lane, and tell ``done`` how it went
        (on a sender's thread). Nothing is kept of it when it fails: the user sees why."""
        with self._lock:
            if not self._stopping:
                self._tests.append((intent, sent_at, done))
                self._lock.notify_all()
                return
        done(PingTrial(sent_at, error="the app is quitting"))

    # -- the keeper's thread -------------------------------------------------------------------

    def _run(self) -> None:
        spool = Spool(self._spool_path)
        try:
            with self._lock:
                for number, intent in spool.waiting():
                    self._lane(intent).waiting.append((number, intent))
            self._keep(spool)
        finally:
            spool.close()
            with self._lock:
                waiters, self._waiters = self._waiters, []
            for _deadline, done in waiters:
                done(False)

    def _keep(self, spool: Spool) -> None:
        while True:
            with self._lock:
                self._lock.wait_for(lambda: self._stopping or self._has_work(), self._pause())
                if self._stopping:
                    return
                incoming, self._incoming = self._incoming, []
                results, self._results = self._results, []
                dropping, self._dropping = self._dropping, False
                if self._kicked:
                    self._kicked = False
                    for lane in self._lanes.values():
                        lane.retry_at = 0.0
            if incoming:
                added = spool.add([self._with_output(intent) for intent in incoming])
                with self._lock:
                    for number, intent in added:
                        self._lane(intent).waiting.append((number, intent))
            if results:
                spool.done(self._settle(results))
            if dropping:
                self._drop_pauses(spool)
            with self._lock:
                self._dispatch()
                idle = not self._incoming and not any(lane.waiting for lane in self._lanes.values())
                self._idle = idle
                self._lock.notify_all()
                now = time.monotonic()
                due = [w for w in self._waiters if idle or w[0] <= now]
                self._waiters = [w for w in self._waiters if w not in due]
            for _deadline, done in due:
                done(idle)

    def _has_work(self) -> bool:
        now = time.monotonic()
        return bool(
            self._incoming
            or self._results
            or self._dropping
            or self._kicked
            or any(not lane.busy and lane.waiting and lane.retry_at <= now
                   for lane in self._lanes.values())
            or (self._waiters and self._idle)
            or any(deadline <= now for deadline, _done in self._waiters)
        )  # fmt: skip

    def _pause(self) -> float | None:
        """Seconds until the next retry or waiter's deadline; None: until something happens."""
        moments = [lane.retry_at for lane in self._lanes.values() if lane.waiting and not lane.busy]
        moments += [deadline for deadline, _done in self._waiters]
        return max(0.0, min(moments) - time.monotonic()) if moments else None

    def _lane(self, intent: Intent) -> Lane:
        key = lane_of(intent)
        lane = self._lanes.get(key)
        if lane is None:
            lane = self._lanes[key] = Lane(intent.what or intent.kind.value)
        return lane

    def _dispatch(self) -> None:
        now = time.monotonic()
        for key, lane in self._lanes.items():
            if not lane.busy and lane.waiting and lane.retry_at <= now:
                lane.busy = True
                number, intent = lane.waiting[0]
                self._jobs.append((key, number, intent))

    def _settle(self, results: list[tuple[str, int, Exception | None]]) -> list[int]:
        """The senders' answers: what is done, and the lanes to try again later."""
        finished = []
        with self._lock:
            for key, number, error in results:
                lane = self._lanes[key]
                lane.busy = False
                if isinstance(error, Unreachable):
                    if (said := f"monitor unreachable ({error})") != lane.last_error:
                        log.warning("%s: %s; retried later", lane.what, said)
                    lane.last_error = said
                    lane.retry_at = time.monotonic() + lane.backoff
                    lane.backoff = min(lane.backoff * 2, LAST_BACKOFF)
                    continue
                if error is None:
                    self.delivered += 1
                    if lane.last_error is not None:
                        log.info("%s: the monitor takes pings again", lane.what)
                    lane.last_delivered = time.time()
                    lane.last_error = None
                    if lane.waiting and lane.waiting[0][0] == number:
                        _delivered(lane, lane.waiting[0][1])
                else:
                    self.refused += 1
                    lane.last_error = f"refused by the monitor ({error})"
                lane.backoff = FIRST_BACKOFF
                if lane.waiting and lane.waiting[0][0] == number:
                    lane.waiting.popleft()
                finished.append(number)
        return finished

    def _drop_pauses(self, spool: Spool) -> None:
        with self._lock:
            doomed = []
            for lane in self._lanes.values():
                # The head of a busy lane is in flight: it is settled by its sender.
                start = 1 if lane.busy else 0
                kept = [
                    item for item in list(lane.waiting)[start:] if item[1].kind is not Kind.pause
                ]
                doomed += [n for n, i in list(lane.waiting)[start:] if i.kind is Kind.pause]
                lane.waiting = deque(list(lane.waiting)[:start] + kept)
        if doomed:
            spool.done(doomed)
            log.info("pauses not sent before the sleep are dropped: the machine is awake")

    def _with_output(self, intent: Intent) -> Intent:
        """A finished run's output tail goes in the spool with its ping, masked: once written,
        the run's row may be pruned."""
        if intent.run_id is None:
            return intent
        try:
            output = self._output_of(intent.run_id) or ""
        except Exception as error:  # a database that cannot be read now: the ping goes all the same
            log.warning("the output of run %s cannot be read: %s", intent.run_id, error)
            output = ""
        if intent.check is not None:
            self._key(intent)  # read now, so that the output is masked before it is kept
        output = self._masker().mask(output)
        if intent.kind is Kind.webhook:
            return replace(intent, payload={**intent.payload, "output": output}, run_id=None)
        return replace(intent, body=output, run_id=None)

    # -- the senders' threads ------------------------------------------------------------------

    def _send_loop(self, cancel: Cancel) -> None:
        while True:
            with self._lock:
                self._lock.wait_for(lambda: self._stopping or bool(self._jobs or self._tests))
                if self._stopping:
                    return
                test = self._tests.popleft() if self._tests else None
                if test is None:
                    key, number, intent = self._jobs.popleft()
            if test is not None:
                self._test(*test, cancel)
                continue
            error: Exception | None = None
            try:
                self._deliver(intent, cancel)
            except MonitorError as failed:
                error = failed
                if isinstance(failed, Refused) and failed.status in (401, 403):
                    self._forget_key(intent)  # changed in the keyring since: read it again
                if not isinstance(failed, Unreachable):
                    log.warning("%s: the monitor refused %s (%s); dropped", intent.what or
                                intent.kind.value, intent.signal or intent.kind.value, failed)  # fmt: skip
            except Exception as failed:  # a damaged spool entry: the thread goes on with the others
                error = failed
                log.exception("%s cannot be sent; dropped", intent.what or intent.kind.value)
            with self._lock:
                self._results.append((key, number, error))
                self._lock.notify_all()

    def _deliver(self, intent: Intent, cancel: Cancel) -> None:
        key = self._key(intent)
        # Every secret held, in every body: a job that prints one must not send it out.
        masker = self._masker()
        if intent.kind is Kind.webhook:
            if intent.url is None:
                raise Refused("a webhook without its URL")
            body = json.dumps(_masked(intent.payload, masker)).encode()
            send("POST", intent.url, body=body, headers={"Content-Type": "application/json"},
                 cancel=cancel)  # fmt: skip
            return
        if intent.check is not None and key is None:
            # A locked keyring may open later, a secret may be set later: held, not dropped.
            raise Unreachable("its API key secret cannot be read now")
        if intent.kind is Kind.pause:
            assert intent.check is not None and key is not None
            self._checks.pause(intent.check, key, cancel)
            return
        if intent.kind is Kind.sync:
            assert intent.check is not None and key is not None
            self._checks.ensure(intent.check, key, cancel)
            self._checks.learn_state(intent.check, key, cancel)
            return
        body = masker.mask(intent.body)[-BODY_LIMIT:].encode()
        if intent.check is not None:
            assert key is not None
            self._checks.again_if_gone(
                intent.check, key, lambda known: ping(known.ping_url, intent, body, cancel),
                cancel,
            )  # fmt: skip
        elif intent.url is not None:
            ping(intent.url, intent, body, cancel)
        else:
            raise Refused("no ping URL")

    def _test(self, intent: Intent, sent_at: datetime, done: TrialDone, cancel: Cancel) -> None:
        answered: list[int] = []
        state: CheckState | None = None
        try:
            body = intent.body.encode()
            if intent.check is None:
                ping(intent.url or "", intent, body, cancel, answered.append)
            elif (key := self._key(intent)) is None:
                raise Refused("its API key secret cannot be read")
            else:
                self._checks.again_if_gone(intent.check, key, lambda known: ping(
                    known.ping_url, intent, body, cancel, answered.append), cancel)  # fmt: skip
                state = self._checks.state(intent.check, key, cancel)
        except Exception as failed:  # every failure is the user's to see, not a thread's end
            status = failed.status if isinstance(failed, Refused) else None
            result = PingTrial(sent_at, status, str(failed) or type(failed).__name__)
        else:
            result = PingTrial(sent_at, answered[-1] if answered else None, state=state)
            with self._lock:
                lane = self._lane(intent)
                lane.last_ping = sent_at.timestamp()
                lane.last_kind = PingKind.test
                lane.state = state or lane.state
        done(result)

    def _key(self, intent: Intent) -> str | None:
        if intent.check is None:
            return None
        name = intent.check.key_secret
        with self._lock:
            key = self._keys.get(name)
        if key is not None:
            return key
        try:
            key = self._secrets.get(name)
        except SecretError:
            # Said by the lane, without the name: users paste the key itself where it goes.
            return None
        HELD_SECRETS.add(key)
        with self._lock:
            self._keys[name] = key
        return key

    def _forget_key(self, intent: Intent) -> None:
        if intent.check is not None:
            with self._lock:
                self._keys.pop(intent.check.key_secret, None)

    def _masker(self) -> Masker:
        return HELD_SECRETS.masker()


def _delivered(lane: Lane, intent: Intent) -> None:
    kind = delivered_kind(intent)
    if kind is not None:
        lane.last_kind, lane.last_ping = kind, lane.last_delivered
        lane.state = state_after(kind, lane.state)


def _masked(value: object, masker: Masker) -> object:
    if isinstance(value, str):
        return masker.mask(value)
    if isinstance(value, dict):
        return {key: _masked(item, masker) for key, item in value.items()}
    return value
