"""JSON-RPC 2.0 over the app's local socket: one JSON value per line (SPEC §6, ``api.protocol``).

Garbage, a client that disconnects mid-line or floods the socket never stops the app: every
request is answered or the client is dropped, and nothing a client sends can raise out of here.
Connections are capped (the oldest idle one goes first) so a flood of idle clients cannot use up
the process's file descriptors, and the listener is checked and re-created if it is lost.

On Linux and macOS the server takes each accepted descriptor itself (``incomingConnection``) rather
than through ``QLocalSocket``: Qt closes a socket as soon as the peer half-closes, which would lose
the answers owed to ``echo REQUEST | socat - UNIX-CONNECT:…``. Windows named pipes cannot half-close,
so there ``QLocalSocket`` serves.
"""

from __future__ import annotations

import json
import logging
import math
import os
import socket as sockets
import stat
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any

from PySide6.QtCore import QObject, QSocketNotifier
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from domi_desktop import __version__
from domi_desktop.api.protocol import (
    FAILED,
    HELLO,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    MAX_BATCH,
    MAX_INT,
    MAX_LINE,
    METHOD_NOT_FOUND,
    MIN_INT,
    NOT_FOUND,
    PARSE_ERROR,
    PROTOCOL_MISMATCH,
    PROTOCOL_VERSION,
)
from domi_desktop.errors import DomiError, NotFoundError, ParamError

log = logging.getLogger(__name__)

MAX_PENDING_OUTPUT = 8 << 20
"""A subscriber that stops reading is dropped once this much output waits for it."""
MAX_CONNECTIONS = 64
"""At most this many clients at once (fewer under a low descriptor limit); see ``_cap``."""

Responder = Callable[[Any], None]
AppMethod = Callable[["Connection", Mapping[str, Any], Responder], Any]
"""An app method answers by returning a value, or later through the responder (return DEFER)."""

DEFER = object()


class RpcError(Exception):
    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


class Connection:
    """One client: splits its bytes into lines, and tracks what it is owed."""

    def __init__(self, server: RpcServer) -> None:
        self.server = server
        self.buffer = bytearray()
        self.subscribed = False
        self.closed = False
        self.eof = False
        self.pending = 0
        """Deferred answers still owed (``run_now`` with ``wait``)."""
        self.last_active = time.monotonic()

    def send(self, message: Mapping[str, Any] | list[Any]) -> None:
        if self.closed:
            return
        data = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        if self.queued() + len(data) > MAX_PENDING_OUTPUT:
            log.warning("dropping an RPC client that does not read its answers or events")
            self.close()
            return
        self.last_active = time.monotonic()
        self._write(data)

    def owe(self) -> Callable[[], None]:
        """Count an answer still owed; the returned callable settles it (once)."""
        self.pending += 1
        settled = False

        def settle() -> None:
            nonlocal settled
            if not settled:
                settled = True
                self.pending -= 1
                self._maybe_finish()

        return settle

    def feed(self, data: bytes) -> None:
        self.last_active = time.monotonic()
        self.buffer += data
        while not self.closed:
            end = self.buffer.find(b"\n")
            if end < 0:
                if len(self.buffer) > MAX_LINE:
                    self.send(_error(None, INVALID_REQUEST, "request line too long"))
                    self.flush()
                    self.close()
                return
            line = bytes(self.buffer[:end])
            del self.buffer[: end + 1]
            if line.strip():
                self.server.handle_line(self, line)

    def end_of_input(self) -> None:
        """The client sent EOF: a last line without a newline counts if it is complete JSON."""
        self.eof = True
        rest = bytes(self.buffer).strip()
        self.buffer.clear()
        if rest and not self.closed:
            try:
                json.loads(rest)
            except (ValueError, RecursionError):
                pass  # cut off mid-request: the client gave up, nothing to answer
            else:
                self.server.handle_line(self, rest)
        self._maybe_finish()

    def _maybe_finish(self) -> None:
        if self.eof and self.pending == 0 and self.queued() == 0:
            self.close()

    def queued(self) -> int:
        raise NotImplementedError

    def flush(self) -> None:
        """Push what is queued now, blocking briefly (before the app quits)."""
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def _write(self, data: bytes) -> None:
        raise NotImplementedError


class _UnixConnection(Connection):
    """A descriptor the server accepted, served with non-blocking reads and writes."""

    def __init__(self, server: RpcServer, descriptor: int) -> None:
        super().__init__(server)
        self._socket = sockets.socket(fileno=descriptor)
        self._socket.setblocking(False)
        self._output = bytearray()
        self._reader = QSocketNotifier(descriptor, QSocketNotifier.Type.Read, server)
        self._writer = QSocketNotifier(descriptor, QSocketNotifier.Type.Write, server)
        self._writer.setEnabled(False)
        self._reader.activated.connect(self._readable)
        self._writer.activated.connect(self._writable)

    def queued(self) -> int:
        return len(self._output)

    def _readable(self) -> None:
        while not self.closed and not self.eof:
            try:
                data = self._socket.recv(65536)
            except BlockingIOError:
                return
            except OSError:
                self.close()
                return
            if not data:
                self._reader.setEnabled(False)
                self.end_of_input()
                return
            self.feed(data)

    def _write(self, data: bytes) -> None:
        self._output += data
        self._writable()

    def _writable(self) -> None:
        while self._output and not self.closed:
            try:
                sent = self._socket.send(self._output)
            except BlockingIOError:
                break
            except OSError:
                self.close()
                return
            del self._output[:sent]
        if self.closed:
            return
        self._writer.setEnabled(bool(self._output))
        self._maybe_finish()

    def flush(self) -> None:
        if self.closed or not self._output:
            return
        try:
            self._socket.settimeout(1.0)
            self._socket.sendall(self._output)
            self._output.clear()
            self._socket.setblocking(False)
        except OSError:
            self.close()

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        for notifier in (self._reader, self._writer):
            notifier.setEnabled(False)
            notifier.deleteLater()
        self._socket.close()
        self.server.forget(self)


class _QtConnection(Connection):
    """A ``QLocalSocket`` (Windows named pipes)."""

    def __init__(self, server: RpcServer, socket: QLocalSocket) -> None:
        super().__init__(server)
        self._socket = socket
        socket.readyRead.connect(self._read)
        socket.disconnected.connect(self._disconnected)

    def queued(self) -> int:
        return int(self._socket.bytesToWrite())

    def _read(self) -> None:
        self.feed(bytes(self._socket.readAll().data()))

    def _disconnected(self) -> None:
        self._read()
        self.close()

    def _write(self, data: bytes) -> None:
        self._socket.write(data)
        self._socket.flush()

    def flush(self) -> None:
        if not self.closed:
            self._socket.waitForBytesWritten(1000)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.server.forget(self)
        self._socket.readyRead.disconnect(self._read)
        self._socket.abort()
        self._socket.deleteLater()


class _Listener(QLocalServer):
    def __init__(self, server: RpcServer) -> None:
        super().__init__(server)
        self._rpc = server

    def incomingConnection(self, socketDescriptor: int, /) -> None:
        if sys.platform == "win32":
            super().incomingConnection(socketDescriptor)
        else:
            self._rpc.adopt(_UnixConnection(self._rpc, socketDescriptor))


class RpcServer(QObject):
    """Serves ``methods`` (service-level, take params) and ``app_methods`` (take the connection)."""

    def __init__(
        self,
        methods: Mapping[str, Callable[[Mapping[str, Any]], Any]],
        app_methods: Mapping[str, AppMethod],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._methods = dict(methods)
        self._app_methods = dict(app_methods)
        self._server = _Listener(self)
        self._server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self._server.newConnection.connect(self._accept)
        self._name: str | None = None
        self._inode: tuple[int, int] | None = None
        self.connections: list[Connection] = []
        self.max_connections = _cap()
        self.dropped = 0

    def listen(self, name: str) -> bool:
        self._name = name
        return self._listen()

    def _listen(self) -> bool:
        assert self._name is not None
        # Only the lock holder calls this, so a leftover socket is a crashed instance's.
        QLocalServer.removeServer(self._name)
        if not self._server.listen(self._name):
            log.error("cannot listen on %s: %s", self._name, self._server.errorString())
            return False
        self._inode = _inode(self._server.fullServerName())
        return True

    def ensure_listening(self) -> bool:
        """Listen again if the listener was lost (Qt closes it when accept fails, e.g. EMFILE)
        or its socket file vanished (a temp cleaner); called on each wake and as clients go."""
        if self._name is None:
            return False
        if self._server.isListening() and (
            sys.platform == "win32" or _inode(self._server.fullServerName()) == self._inode
        ):
            return True
        log.warning("the RPC socket %s was lost; listening again", self._name)
        self._server.close()
        return self._listen()

    def name(self) -> str:
        return self._server.fullServerName()

    def close(self) -> None:
        self._name = None
        for connection in list(self.connections):
            connection.close()
        self._server.close()

    def broadcast(self, method: str, params: Mapping[str, Any]) -> None:
        """An event to every subscriber (``events.subscribe``)."""
        message = {"jsonrpc": "2.0", "method": method, "params": params}
        for connection in list(self.connections):
            if connection.subscribed:
                connection.send(message)

    def forget(self, connection: Connection) -> None:
        if connection in self.connections:
            self.connections.remove(connection)
            self.ensure_listening()

    def adopt(self, connection: Connection) -> None:
        self.connections.append(connection)
        while len(self.connections) > self.max_connections:
            # Idle before subscribers before clients owed an answer; the oldest first.
            victim = min(
                self.connections, key=lambda c: (c.pending > 0, c.subscribed, c.last_active)
            )
            self.dropped += 1
            if self.dropped % 100 == 1:
                log.warning(
                    "more than %d RPC clients: dropping the oldest idle ones (%d so far)",
                    self.max_connections,
                    self.dropped,
                )
            victim.close()

    def _accept(self) -> None:
        while self._server.hasPendingConnections():
            self.adopt(_QtConnection(self, self._server.nextPendingConnection()))
        self.ensure_listening()

    def handle_line(self, connection: Connection, line: bytes) -> None:
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            connection.send(_error(None, PARSE_ERROR, "parse error: not a JSON object"))
            return
        if not isinstance(message, list):
            self._handle(connection, message, connection.send)
            return
        if not message:
            connection.send(_error(None, INVALID_REQUEST, "empty batch"))
            return
        if len(message) > MAX_BATCH:
            connection.send(
                _error(
                    None,
                    INVALID_REQUEST,
                    f"batch of {len(message)} requests: at most {MAX_BATCH} in one batch",
                )
            )
            return
        replies: list[Any] = []
        owed = sum(1 for item in message if not _is_notification(item))
        settle = connection.owe()

        def collect(reply: Any) -> None:
            replies.append(reply)
            if len(replies) == owed:
                connection.send(replies)

        for item in message:
            self._handle(connection, item, collect)
        settle()

    def _handle(self, connection: Connection, message: Any, reply: Callable[[Any], None]) -> None:
        notification = _is_notification(message)
        request_id = message.get("id") if isinstance(message, dict) else None
        if not _valid_id(request_id):
            reply(_error(None, INVALID_REQUEST, "invalid request: 'id' must be a string or number"))
            return

        def answer(result: Any) -> None:
            if not notification:
                reply({"jsonrpc": "2.0", "id": request_id, "result": result})

        def fail(code: int, message: str, data: Any = None) -> None:
            if not notification:
                reply(_error(request_id, code, message, data))

        try:
            method, params = _validate(message)
            if method == HELLO:
                answer(_hello(params))
            elif method in self._app_methods:
                self._call_app_method(connection, method, params, answer)
            elif method in self._methods:
                answer(self._methods[method](params))
            else:
                raise RpcError(METHOD_NOT_FOUND, f"method not found: {method}")
        except RpcError as error:
            fail(error.code, error.message, error.data)
        except ParamError as error:
            fail(INVALID_PARAMS, str(error), {"param": error.param})
        except NotFoundError as error:
            fail(NOT_FOUND, str(error))
        except DomiError as error:
            fail(FAILED, str(error))
        except OverflowError as error:  # a number the store or the clock cannot hold
            fail(INVALID_PARAMS, f"params: a number is out of range ({error})", {"param": "params"})
        except Exception:  # a bug must not take the app down with a client's request
            log.exception("RPC method failed")
            fail(INTERNAL_ERROR, "internal error (see the app's log)")

    def _call_app_method(
        self, connection: Connection, method: str, params: Mapping[str, Any], answer: Responder
    ) -> None:
        settle = connection.owe()

        def respond(result: Any) -> None:
            answer(result)
            settle()

        try:
            result = self._app_methods[method](connection, params, respond)
        except BaseException:
            settle()
            raise
        if result is not DEFER:
            respond(result)


def _is_notification(message: Any) -> bool:
    return isinstance(message, dict) and "id" not in message


def _valid_id(request_id: Any) -> bool:
    # JSON-RPC ids are strings, numbers or null; objects, arrays and booleans are refused.
    return request_id is None or (
        isinstance(request_id, (str, int, float)) and not isinstance(request_id, bool)
    )


def _validate(message: Any) -> tuple[str, Mapping[str, Any]]:
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        raise RpcError(INVALID_REQUEST, "invalid request: expected a JSON-RPC 2.0 object")
    method = message.get("method")
    if not isinstance(method, str):
        raise RpcError(INVALID_REQUEST, "invalid request: 'method' must be a string")
    params = message.get("params", {})
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise RpcError(INVALID_PARAMS, "params: must be an object (named parameters)")
    _check_numbers(params)
    return method, params


def _check_numbers(params: Mapping[str, Any]) -> None:
    """Refuse integers beyond SQLite's 64 bits and non-finite numbers, naming the parameter."""
    stack: list[tuple[str, Any]] = [(name, value) for name, value in params.items()]
    while stack:
        path, value = stack.pop()
        if isinstance(value, bool):
            continue
        if isinstance(value, int) and not MIN_INT <= value <= MAX_INT:
            shown = str(value) if len(str(value)) <= 30 else f"a {len(str(value))}-digit number"
            raise RpcError(
                INVALID_PARAMS,
                f"{path}: {shown} is out of range ({MIN_INT} to {MAX_INT})",
                {"param": path},
            )
        if isinstance(value, float) and not math.isfinite(value):
            raise RpcError(INVALID_PARAMS, f"{path}: must be a finite number", {"param": path})
        if isinstance(value, dict):
            stack.extend((f"{path}.{key}", item) for key, item in value.items())
        elif isinstance(value, list):
            stack.extend((f"{path}[{index}]", item) for index, item in enumerate(value))


def _hello(params: Mapping[str, Any]) -> dict[str, Any]:
    version = params.get("protocol")
    if not isinstance(version, int) or isinstance(version, bool):
        raise RpcError(INVALID_PARAMS, "protocol: must be an integer", {"param": "protocol"})
    if version != PROTOCOL_VERSION:
        raise RpcError(
            PROTOCOL_MISMATCH,
            f"protocol mismatch: the client speaks version {version}, the app speaks version "
            f"{PROTOCOL_VERSION}; use the same domi-desktop release for both",
            {"client": version, "app": PROTOCOL_VERSION},
        )
    return {"protocol": PROTOCOL_VERSION, "version": __version__}


def _error(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def _cap() -> int:
    """``MAX_CONNECTIONS``, or a quarter of the descriptor limit when that is lower."""
    if sys.platform == "win32":  # named pipe handles are not descriptors
        return MAX_CONNECTIONS
    import resource

    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return MAX_CONNECTIONS
    return max(4, min(MAX_CONNECTIONS, soft // 4))


def _inode(path: str) -> tuple[int, int] | None:
    """Which socket file ``path`` is now, if it is one."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_dev, info.st_ino) if stat.S_ISSOCK(info.st_mode) else None
