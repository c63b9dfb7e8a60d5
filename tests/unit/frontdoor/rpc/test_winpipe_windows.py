"""The app's pipe channel against real Win32 pipes (under Wine in ``make test``): what a client
writes arrives, what the app writes reaches the client, and the end is told once, whoever ends."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

import pytest

from domi_desktop.frontdoor.rpc.client import PipeTransport, _kernel32_peek
from domi_desktop.frontdoor.rpc.winpipe import PipeChannel

pytestmark = pytest.mark.windows_only
PIPE_TYPE_BYTE = PIPE_READMODE_BYTE = 0  # winbase.h; _winapi names only the message modes
TIMEOUT = 60.0


@dataclass
class Heard:
    data: bytearray = field(default_factory=bytearray)
    ends: int = 0
    changed: threading.Condition = field(default_factory=threading.Condition)

    def on_data(self, chunk: bytes) -> None:
        with self.changed:
            self.data += chunk
            self.changed.notify_all()

    def on_end(self) -> None:
        with self.changed:
            self.ends += 1
            self.changed.notify_all()

    def wait(self, what: str, condition: Callable[[], object]) -> None:
        with self.changed:
            assert self.changed.wait_for(condition, TIMEOUT), f"not within {TIMEOUT:g} s: {what}"


@dataclass
class Pair:
    channel: PipeChannel
    client: BinaryIO
    transport: PipeTransport
    heard: Heard


@pytest.fixture
def pair() -> Iterator[Pair]:
    """A channel serving the server end of a fresh overlapped byte pipe, and its client."""
    import _winapi
    import msvcrt

    name = rf"\\.\pipe\domi-channel-test-{os.getpid()}-{time.monotonic_ns()}"
    server = _winapi.CreateNamedPipe(
        name,
        _winapi.PIPE_ACCESS_DUPLEX | _winapi.FILE_FLAG_OVERLAPPED,
        PIPE_TYPE_BYTE | PIPE_READMODE_BYTE | _winapi.PIPE_WAIT,
        1,
        65536,
        65536,
        0,
        _winapi.NULL,
    )
    client = open(name, "r+b", buffering=0)  # noqa: SIM115
    heard = Heard()
    channel = PipeChannel(server, heard.on_data, heard.on_end)
    channel.start()
    transport = PipeTransport(client, msvcrt.get_osfhandle(client.fileno()), _kernel32_peek())
    try:
        yield Pair(channel, client, transport, heard)
    finally:
        channel.close()
        heard.wait("the channel ended", lambda: heard.ends)
        client.close()


def receive(transport: PipeTransport, size: int) -> bytes:
    received = b""
    deadline = time.monotonic() + TIMEOUT
    while len(received) < size:
        assert time.monotonic() < deadline, f"{len(received)} of {size} bytes arrived"
        chunk = transport.receive(1.0)
        assert chunk != b"", "the pipe closed"
        received += chunk or b""
    return received


def test_what_each_side_writes_reaches_the_other_in_order(pair: Pair) -> None:
    big = bytes(range(256)) * 1024  # 256 KiB: more than one read and one write of 64 KiB
    pair.transport.send(b"hello\n")
    pair.transport.send(big)
    pair.heard.wait("the client's bytes", lambda: len(pair.heard.data) == 6 + len(big))
    assert bytes(pair.heard.data) == b"hello\n" + big

    def write_in_pieces() -> None:
        for start in range(0, len(big), 1000):
            pair.channel.write(big[start : start + 1000])

    sent = threading.Thread(target=write_in_pieces)
    sent.start()
    assert receive(pair.transport, len(big)) == big
    sent.join()
    pair.channel.flush(TIMEOUT)
    assert pair.channel.queued() == 0


def test_a_client_that_leaves_is_told_once(pair: Pair) -> None:
    pair.client.close()
    pair.heard.wait("the end", lambda: pair.heard.ends)
    pair.channel.close()  # after the end: nothing more to do, nothing more told
    pair.channel.write(b"too late\n")
    assert pair.heard.ends == 1


def test_what_was_written_before_close_is_still_read_by_the_client(pair: Pair) -> None:
    pair.channel.write(b'{"result":"bye"}\n')
    pair.channel.flush(TIMEOUT)
    pair.channel.close()
    pair.heard.wait("the end", lambda: pair.heard.ends)
    assert receive(pair.transport, 17) == b'{"result":"bye"}\n'
