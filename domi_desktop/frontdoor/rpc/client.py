"""The CLI's side of the app's socket: blocking JSON-RPC calls and event streams, standard library only.

Importing Qt's network module cost every command about 130 ms; a Unix socket (Linux, macOS) or a
named pipe opened as a file (Windows: ``QLocalServer`` listens on ``\\\\.\\pipe\\NAME``) does the same
job. Before a byte is sent the other end must prove to run as this user (``peercred``), and the
first request is ``app.hello`` carrying ``PROTOCOL_VERSION``.

The CLI imports this module only once the app's socket exists (``instance.app_socket``), and
the peer check (``peercred``: ``ctypes``, on macOS ``ctypes.util``, which loads ``subprocess``) only
once there is a connection to check.
"""

from __future__ import annotations

import itertools
import json
import os
import socket
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, Protocol

from domi_desktop.errors import AppError, DomiError, NotFoundError, ParamError
from domi_desktop.frontdoor.rpc.protocol import HELLO, INVALID_PARAMS, NOT_FOUND, PROTOCOL_VERSION

CONNECT_TIMEOUT = 1.0
HELLO_TIMEOUT = 3.0
"""An app that has not answered the hello by then is frozen (SIGSTOP, a debugger) or stuck; the CLI
then uses the database. Loose enough for a loaded machine: the app answers between two slices of
at most 10 ms of a wake's work."""
CALL_TIMEOUT = 30.0
PIPE_PREFIX = "\\\\.\\pipe\\"
ERROR_PIPE_BUSY = 231


class SilentApp(AppError):
    """The app's socket takes the connection but the app does not answer: no answer in time, or
    the connection closed or refused first (an app crashing, or dropping clients)."""


class Transport(Protocol):
    def send(self, data: bytes) -> None: ...

    def receive(self, timeout: float) -> bytes | None:
        """Some bytes; ``b""`` once the app has closed the connection; ``None`` on time-out."""
        ...

    def close(self) -> None: ...


class UnixTransport:
    def __init__(self, sock: socket.socket) -> None:
        self._socket = sock

    def send(self, data: bytes) -> None:
        self._socket.settimeout(CALL_TIMEOUT)
        self._socket.sendall(data)

    def receive(self, timeout: float) -> bytes | None:
        self._socket.settimeout(timeout)
        try:
            return self._socket.recv(65536)
        except TimeoutError:
            return None
        except OSError:
            return b""

    def close(self) -> None:
        self._socket.close()


PeekPipe = Callable[[int], int]
"""Bytes waiting in a pipe (``PeekNamedPipe``); raises ``BrokenPipeError`` once it is closed."""


class PipeTransport:
    """A named pipe opened as a file, polled with ``PeekNamedPipe`` for time-outs.

    Not a reader thread: I/O on a synchronous pipe handle is serialised by Windows, so a read
    blocked in one thread would hold up every write.
    """

    def __init__(self, file: BinaryIO, handle: int, peek: PeekPipe) -> None:
        self._file = file
        self._handle = handle
        self._peek = peek

    def send(self, data: bytes) -> None:
        self._file.write(data)
        self._file.flush()

    def receive(self, timeout: float) -> bytes | None:
        deadline = time.monotonic() + timeout
        pause = 0.001
        while True:
            try:
                waiting = self._peek(self._handle)
            except OSError:
                return b""
            if waiting:
                return self._file.read(waiting)
            if time.monotonic() >= deadline:
                return None
            time.sleep(pause)
            pause = min(pause * 2, 0.05)

    def close(self) -> None:
        self._file.close()


class Kernel32Peek:
    """``PeekNamedPipe`` over ``kernel32`` (a fake in tests)."""

    def __init__(self, kernel32: Any) -> None:
        self._kernel32 = kernel32

    def __call__(self, handle: int) -> int:
        import ctypes

        waiting = ctypes.c_ulong()
        if not self._kernel32.PeekNamedPipe(
            ctypes.c_void_p(handle), None, 0, None, ctypes.byref(waiting), None
        ):
            code = int(self._kernel32.GetLastError())
            raise BrokenPipeError(code, f"the pipe is closed (Windows error {code})")
        return waiting.value


class RpcClient:
    def __init__(self, transport: Transport, name: str) -> None:
        self._transport = transport
        self.name = name
        self._ids = itertools.count(1)
        self._buffer = bytearray()
        self.closed = False

    def hello(self) -> dict[str, Any]:
        """Tell the app which protocol this client speaks; it refuses another version."""
        result: dict[str, Any] = self.call(
            HELLO, {"protocol": PROTOCOL_VERSION}, timeout=HELLO_TIMEOUT
        )
        return result

    def call(
        self, method: str, params: dict[str, Any], *, timeout: float | None = CALL_TIMEOUT
    ) -> Any:
        """The result of ``method``; ``timeout=None`` waits as long as the app is there."""
        request_id = next(self._ids)
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        while True:
            message = self.receive(CALL_TIMEOUT if timeout is None else timeout)
            if message is None:
                if self.closed:
                    raise SilentApp(f"the app closed the connection before answering {method}")
                if timeout is None:
                    continue
                raise SilentApp(
                    f"the app on {self.name} did not answer {method} within {timeout:g} s"
                    " (stopped or stuck?)"
                )
            if message.get("id") != request_id:
                continue  # an event for a subscriber; not ours to handle here
            if "error" in message:
                raise _error(message["error"])
            return message.get("result")

    def send(self, message: dict[str, Any]) -> None:
        try:
            self._transport.send(json.dumps(message).encode() + b"\n")
        except OSError as error:
            raise SilentApp(f"cannot send to the app on {self.name}: {error}") from None

    def receive(self, timeout: float) -> dict[str, Any] | None:
        """The next message, or None on time-out or once the app has gone (then ``closed``)."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            if self.closed:
                return None
            data = self._transport.receive(max(0.0, deadline - time.monotonic()))
            if data is None:
                return None
            if not data:
                self.closed = True
                return None
            self._buffer += data
        end = self._buffer.index(b"\n")
        line = bytes(self._buffer[:end])
        del self._buffer[: end + 1]
        try:
            message = json.loads(line)
        except ValueError:
            raise AppError(f"the app sent something that is not JSON: {line[:80]!r}") from None
        return message if isinstance(message, dict) else {"batch": message}

    def events(self) -> Iterator[dict[str, Any]]:
        """Subscribe and yield event notifications until the app goes away."""
        self.call("events.subscribe", {})
        while not self.closed:
            message = self.receive(60.0)
            if message is not None and "method" in message:
                yield message

    def close(self) -> None:
        self._transport.close()


def _error(error: Any) -> DomiError:
    message = str(error.get("message", "error")) if isinstance(error, dict) else str(error)
    code = error.get("code") if isinstance(error, dict) else None
    if code == INVALID_PARAMS:
        data = error.get("data") or {}
        return ParamError(str(data.get("param", "params")), message.split(": ", 1)[-1])
    if code == NOT_FOUND:
        return NotFoundError(message)
    return AppError(message)


def connect_to_app(data_dir: str | os.PathLike[str] | None) -> RpcClient | None:
    """A client of the instance running on this data dir, or None when none runs.

    Raises ``PeerError`` when the socket's other end is another user's, ``SilentApp`` when it
    does not answer the hello in time, and ``AppError`` when it speaks another protocol version.
    """
    from domi_desktop.frontdoor.rpc.instance import app_socket
    from domi_desktop.paths import resolve_data_dir

    name = app_socket(resolve_data_dir(data_dir))
    return None if name is None else connect(name)


def connect(name: str) -> RpcClient | None:
    """A client of the app listening on ``name`` (``instance.app_socket``), None if none does."""
    transport = open_pipe(name) if sys.platform == "win32" else open_unix(name)
    if transport is None:
        return None
    client = RpcClient(transport, name)
    try:
        client.hello()
    except BaseException:
        client.close()
        raise
    return client


def open_unix(path: str) -> UnixTransport | None:
    if sys.platform == "win32":
        raise AppError("Windows has no Unix sockets here: the app listens on a named pipe")
    if not Path(path).exists():
        return None  # the common case: no app
    from domi_desktop.frontdoor.rpc.peercred import check_unix_peer

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(CONNECT_TIMEOUT)
    try:
        sock.connect(path)
        check_unix_peer(sock, path)
    except (ConnectionRefusedError, FileNotFoundError, TimeoutError):
        sock.close()
        return None  # a stale socket: the app died; the next app start removes it
    except BaseException:
        sock.close()
        raise
    return UnixTransport(sock)


def open_pipe(
    name: str,
    *,
    opener: Callable[[str], BinaryIO] | None = None,
    handle_of: Callable[[BinaryIO], int] | None = None,
    peek: PeekPipe | None = None,
    check: Callable[[int, str], None] | None = None,
) -> PipeTransport | None:
    """``QLocalServer``'s pipe for ``name`` opened as a file (Windows); the keyword arguments
    replace the Win32 boundary in tests."""
    path = PIPE_PREFIX + name
    open_file = opener or _open_pipe_file
    deadline = time.monotonic() + CONNECT_TIMEOUT
    while True:
        try:
            file = open_file(path)
            break
        except FileNotFoundError:
            return None
        except OSError as error:
            # Every instance of the pipe busy: the server makes a new one after each accept.
            if getattr(error, "winerror", None) != ERROR_PIPE_BUSY or time.monotonic() > deadline:
                return None
            time.sleep(0.01)
    try:
        handle = (handle_of or _pipe_handle)(file)
        (check or _check_pipe)(handle, path)
    except BaseException:
        file.close()
        raise
    return PipeTransport(file, handle, peek or _kernel32_peek())


def _open_pipe_file(path: str) -> BinaryIO:
    return open(path, "r+b", buffering=0)


def _pipe_handle(file: BinaryIO) -> int:
    if sys.platform != "win32":
        raise AppError("named pipes are a Windows thing")
    import msvcrt

    return msvcrt.get_osfhandle(file.fileno())


def _check_pipe(handle: int, path: str) -> None:
    from domi_desktop.frontdoor.rpc.peercred import check_pipe_server, windows_users

    check_pipe_server(handle, path, windows_users())


def _kernel32_peek() -> PeekPipe:
    if sys.platform != "win32":
        raise AppError("named pipes are a Windows thing")
    import ctypes

    from domi_desktop.ffi import Signature, load_windows

    dword_p = ctypes.POINTER(ctypes.c_ulong)
    signatures: dict[str, Signature] = {
        "PeekNamedPipe": (
            (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_ulong, dword_p, dword_p, dword_p),
            ctypes.c_int32,
        ),
        "GetLastError": ((), ctypes.c_uint32),
    }
    return Kernel32Peek(load_windows("kernel32", signatures))
