"""``QtLoop.call_soon``: callbacks from any thread run on the loop thread in the order they came,
a turn's worth at a time, so a flood of them never holds the loop's timers back."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from functools import partial

import pytest
from PySide6.QtCore import QCoreApplication, QEventLoop, QTimer

from domi_desktop.app.qtloop import QtLoop

DEADLINE = 30.0


def turn_until(done: Callable[[], bool]) -> None:
    deadline = time.monotonic() + DEADLINE
    while not done():
        assert time.monotonic() < deadline, "the loop never got there"
        QCoreApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 50)


def test_callbacks_from_many_threads_run_on_the_loop_thread_in_their_order(
    core_app: QCoreApplication,
) -> None:
    loop = QtLoop()
    ran: list[tuple[int, int]] = []
    threads_seen: set[int] = set()

    def record(thread: int, index: int) -> None:
        ran.append((thread, index))
        threads_seen.add(threading.get_ident())

    def post(thread: int) -> None:
        for index in range(2_000):
            loop.call_soon(partial(record, thread, index))

    posters = [threading.Thread(target=post, args=(thread,)) for thread in range(4)]
    for poster in posters:
        poster.start()
    for poster in posters:
        poster.join()
    turn_until(lambda: len(ran) == 8_000)
    assert threads_seen == {threading.get_ident()}
    for thread in range(4):
        assert [index for who, index in ran if who == thread] == list(range(2_000))


def test_callbacks_posted_by_callbacks_wait_for_the_next_turn(core_app: QCoreApplication) -> None:
    """A callback that keeps posting another never starves the timers: each turn runs only what
    was there when it began."""
    loop = QtLoop()
    ran: list[int] = []
    ticks_at: list[int] = []
    heartbeat = QTimer()
    heartbeat.timeout.connect(lambda: ticks_at.append(len(ran)))
    heartbeat.start(0)

    def again(index: int) -> None:
        ran.append(index)
        if index < 200:
            loop.call_soon(lambda: again(index + 1))

    loop.call_soon(lambda: again(0))
    turn_until(lambda: len(ran) == 201)
    heartbeat.stop()
    assert ran == list(range(201))
    during = {count for count in ticks_at if 0 < count < 201}
    assert len(during) >= 10, f"the timer ran only at {sorted(during)} callbacks done"


def test_a_callback_that_raises_does_not_stall_the_ones_behind_it(
    core_app: QCoreApplication, monkeypatch: pytest.MonkeyPatch
) -> None:
    raised: list[BaseException] = []
    monkeypatch.setattr(sys, "excepthook", lambda _type, error, _tb: raised.append(error))
    loop = QtLoop()
    ran: list[str] = []

    def broken() -> None:
        raise ValueError("broken callback")

    loop.call_soon(lambda: ran.append("before"))
    loop.call_soon(broken)
    loop.call_soon(lambda: ran.append("after"))
    turn_until(lambda: ran == ["before", "after"])
    assert [str(error) for error in raised] == ["broken callback"]
    loop.call_soon(lambda: ran.append("later"))
    turn_until(lambda: ran == ["before", "after", "later"])
