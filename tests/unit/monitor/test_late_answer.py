"""An answer that has arrived is read even once the request's time has run out (a process stopped
or starved, then resumed late): sending the ping again would count it twice."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest

from domi_desktop.monitor.transport import _DeadlineReader


@pytest.fixture
def pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    app, monitor = socket.socketpair()
    try:
        yield app, monitor
    finally:
        app.close()
        monitor.close()


def test_an_answer_already_there_is_read_past_the_deadline(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    app, monitor = pair
    monitor.sendall(b"HTTP/1.1 200 OK\r\n")
    reader = _DeadlineReader(app, deadline=time.monotonic() - 60)
    buffer = bytearray(64)
    assert reader.readinto(buffer) == 17
    assert bytes(buffer[:17]) == b"HTTP/1.1 200 OK\r\n"
    reader.close()


def test_past_the_deadline_nothing_more_is_waited_for(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    app, _monitor = pair
    reader = _DeadlineReader(app, deadline=time.monotonic() - 60)
    with pytest.raises(TimeoutError, match="took too long to answer"):
        reader.readinto(bytearray(64))
    reader.close()
