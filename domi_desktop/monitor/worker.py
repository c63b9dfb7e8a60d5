"""The thread that tells the monitors: intents in order from the spool, retried with backoff.

Nothing here runs on the loop (GUI) thread or a job's: ``submit`` only appends to a list under a
lock. A monitor that cannot be reached holds the queue (order matters: a pause must not overtake
the pings before it), and is tried again after 1 s, 2 s, 4 s... up to 5 minutes, or at once after
a wake.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlencode

from domi_desktop.errors import SecretError
from domi_desktop.monitor.intents import Intent, Kind
from domi_desktop.monitor.spool import SPOOL_FILENAME, Spool
from domi_desktop.monitor.transport import (
    BODY_LIMIT,
    CHECKS_FILENAME,
    CheckBook,
    MonitorError,
    Refused,
    Unreachable,
    send,
)
from domi_desktop.ports import SecretStore
from domi_desktop.secrets import Masker

log = logging.getLogger(__name__)

FIRST_BACKOFF = 1.0
LAST_BACKOFF = 300.0


class Worker:
    def __init__(
        self,
        data_dir: Path,
        secrets: SecretStore,
        output_of: Callable[[int], str | None],
    ) -> None:
        """``output_of(run_id)``: a finished run's output tail as recorded (masked), read on
        this worker's thread."""
        self._secrets = secrets
        self._output_of = output_of
        self._spool_path = data_dir / SPOOL_FILENAME
        self._checks = CheckBook(data_dir / CHECKS_FILENAME)
        self._incoming: list[Intent] = []
        self._lock = threading.Condition()
        self._stopping = False
        self._kicked = False
        self._dropping = False
        self._idle = False
        """Nothing left to send; False until the worker has read the spool a previous run left."""
        self._thread: threading.Thread | None = None
        self._keys: set[str] = set()
        self.delivered = 0
        self.refused = 0

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="domi-monitor", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        """What is not delivered stays in the spool for the next start."""
        with self._lock:
            self._stopping = True
            self._lock.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)

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

    # -- the worker's thread -------------------------------------------------------------------

    def _run(self) -> None:
        spool = Spool(self._spool_path)
        backoff = FIRST_BACKOFF
        while True:
            with self._lock:
                if not spool.items and not self._incoming:
                    self._idle = True
                    self._lock.notify_all()
                self._lock.wait_for(lambda: self._stopping or self._incoming or spool.items)
                if self._stopping:
                    return
                incoming, self._incoming = self._incoming, []
                dropping, self._dropping = self._dropping, False
            if incoming:
                spool.add([self._with_output(intent) for intent in incoming])
            if dropping and spool.drop(lambda item: item.kind is Kind.pause):
                log.info("pauses not sent before the sleep are dropped: the machine is awake")
            if not spool.items:
                continue
            intent = spool.items[0]
            try:
                self._deliver(intent)
            except Unreachable as error:
                log.warning("%s: monitor unreachable (%s); retry in %.0f s", intent.what or
                            intent.kind.value, error, backoff)  # fmt: skip
                with self._lock:
                    self._lock.wait_for(lambda: self._stopping or self._kicked, backoff)
                    self._kicked = False
                backoff = min(backoff * 2, LAST_BACKOFF)
                continue
            except MonitorError as error:
                self.refused += 1
                log.warning("%s: the monitor refused %s (%s); dropped", intent.what or
                            intent.kind.value, intent.signal or intent.kind.value, error)  # fmt: skip
            except Exception:  # a damaged spool entry: the thread must go on with the others
                self.refused += 1
                log.exception("%s cannot be sent; dropped", intent.what or intent.kind.value)
            else:
                self.delivered += 1
            backoff = FIRST_BACKOFF
            spool.done(intent)

    def _with_output(self, intent: Intent) -> Intent:
        """A finished run's output tail goes in the spool with its ping: once written, the
        run's row may be pruned."""
        if intent.run_id is None:
            return intent
        try:
            output = self._output_of(intent.run_id) or ""
        except Exception as error:  # a database that cannot be read now: the ping goes all the same
            log.warning("the output of run %s cannot be read: %s", intent.run_id, error)
            output = ""
        if intent.kind is Kind.webhook:
            return replace(intent, payload={**intent.payload, "output": output}, run_id=None)
        return replace(intent, body=output, run_id=None)

    def _deliver(self, intent: Intent) -> None:
        key = self._key(intent)
        # Every API key read so far, in every body: a job that prints one must not send it out.
        masker = Masker(self._keys)
        if intent.kind is Kind.webhook:
            if intent.url is None:
                raise Refused("a webhook without its URL")
            body = json.dumps(_masked(intent.payload, masker)).encode()
            send("POST", intent.url, body=body, headers={"Content-Type": "application/json"})
            return
        if intent.check is not None and key is None:
            # A locked keyring may open later: held, not dropped.
            raise Unreachable(f"the API key {intent.check.key_secret!r} cannot be read now")
        if intent.kind is Kind.pause:
            assert intent.check is not None and key is not None
            self._checks.pause(intent.check, key)
            return
        if intent.kind is Kind.sync:
            assert intent.check is not None and key is not None
            self._checks.ensure(intent.check, key)
            return
        body = masker.mask(intent.body)[-BODY_LIMIT:].encode()
        if intent.check is not None:
            assert key is not None
            self._checks.again_if_gone(
                intent.check, key, lambda known: _ping(known.ping_url, intent, body)
            )
        elif intent.url is not None:
            _ping(intent.url, intent, body)
        else:
            raise Refused("no ping URL")

    def _key(self, intent: Intent) -> str | None:
        if intent.check is None:
            return None
        try:
            key = self._secrets.get(intent.check.key_secret)
        except SecretError as error:
            log.warning("the Healthchecks API key cannot be read: %s", error)
            return None
        self._keys.add(key)
        return key


def _ping(url: str, intent: Intent, body: bytes) -> None:
    signal = intent.signal if intent.kind is Kind.ping else ""
    target = url.rstrip("/") + (f"/{signal}" if signal else "")
    if intent.rid is not None:
        target += "?" + urlencode({"rid": intent.rid})
    send("POST", target, body=body, headers={"Content-Type": "text/plain; charset=utf-8"})


def _masked(value: object, masker: Masker) -> object:
    if isinstance(value, str):
        return masker.mask(value)
    if isinstance(value, dict):
        return {key: _masked(item, masker) for key, item in value.items()}
    return value
