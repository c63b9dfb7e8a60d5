"""JSON-RPC 2.0 over the app's local socket: one JSON value per line (``protocol``).

Garbage, a client that disconnects mid-line or floods the socket never stops the app: every
request is answered or the client is dropped, and nothing a client sends can raise out of here.
Connections are capped (the oldest idle one goes first) so a flood of idle clients cannot use up
the process's file descriptors, and the listener is checked and re-created if it is lost.

The server takes each accepted connection itself (``incomingConnection``) rather than through
``QLocalSocket``. On Linux and macOS Qt closes a socket as soon as the peer half-closes, which would
lose the answers owed to ``echo REQUEST | socat - UNIX-CONNECT:…``; on Windows Qt's pipe reads are
started by thread-pool threads, and a retired one takes its reads with it (``winpipe``).
"""

from __future__ import annotations

import json
import logging
import os
import socket as sockets
import stat
import sys
import time
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QSocketNotifier
from PySide6.QtNetwork import QLocalServer

from domi_desktop.frontdoor.rpc.dispatch import AppMethod, Dispatcher, error_reply
from domi_desktop.frontdoor.rpc.protocol import EVENTS_CLOSED, INVALID_REQUEST, MAX_LINE
from domi_desktop.frontdoor.rpc.socket_path import SocketDirError, recreate_socket_dir

log = logging.getLogger(__name__)

MAX_PENDING_OUTPUT = 8 << 20
"""A subscriber that stops reading is dropped once this much output waits for it."""
MAX_CONNECTIONS = 64
"""At most this many clients at once (fewer under a low descriptor limit); see ``_cap``."""
SUBSCRIBER_SHARE = 2
"""Subscribers hold at most 1/SUBSCRIBER_SHARE of the connections: the rest is for requests."""


class Connection:
    """One client: splits its bytes into lines, and tracks what it is owed."""

    def __init__(self, server: RpcServer) -> None:
        self.server = server
        self.buffer = bytearray()
        self._subscribed = False
        self.closed = False
        self.eof = False
        self.pending = 0
        """Deferred answers still owed (``run_now`` with ``wait``)."""
        self.last_active = time.monotonic()

    def send(self, message: Mapping[str, Any] | list[Any]) -> None:
        if self.closed:
            return
        text = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
        # Text echoed from a request (an unknown method's name in its error) may hold a lone
        # surrogate: it goes out as its JSON escape (\udcff), still JSON, not as a failed answer.
        data = text.encode("utf-8", "backslashreplace") + b"\n"
        if self.queued() + len(data) > MAX_PENDING_OUTPUT:
            log.warning("dropping an RPC client that does not read its answers or events")
            self.close()
            return
        self.last_active = time.monotonic()
        self._write(data)

    @property
    def subscribed(self) -> bool:
        """Whether this client gets every event (``events.subscribe``); set, it takes a place
        among the server's subscribers."""
        return self._subscribed

    @subscribed.setter
    def subscribed(self, value: bool) -> None:
        if value and not self._subscribed and not self.closed:
            self._subscribed = True
            self.server.subscribed(self)

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
                    self.send(error_reply(None, INVALID_REQUEST, "request line too long"))
                    self.flush()
                    self.close()
                return
            line = bytes(self.buffer[:end])
            del self.buffer[: end + 1]
            if line.strip():
                self.server.dispatcher.handle_line(self, line)

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
                self.server.dispatcher.handle_line(self, rest)
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


class _PipeConnection(Connection):
    """A named pipe handle the server accepted (Windows), read and written by its own thread
    (``winpipe``); what it reads is handed to this connection by the app's ``call_soon``, the
    road the job threads take. A Qt signal of each connection's own, emitted from its pipe thread,
    failed inside PySide under load ("SystemError: Type does not define the tp_name field" on
    entering the slot), and the app answered no one after it."""

    def __init__(self, server: RpcServer, handle: int) -> None:
        super().__init__(server)
        from domi_desktop.frontdoor.rpc.winpipe import PipeChannel

        self._channel = PipeChannel(
            handle,
            lambda data: server.call_soon(partial(self.feed, data)),
            lambda: server.call_soon(self.close),
        )
        self._channel.start()

    def queued(self) -> int:
        return self._channel.queued()

    def _write(self, data: bytes) -> None:
        self._channel.write(data)

    def flush(self) -> None:
        if not self.closed:
            self._channel.flush(1.0)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self._channel.close()
        self.server.forget(self)


class _Listener(QLocalServer):
    def __init__(self, server: RpcServer) -> None:
        super().__init__(server)
        self._rpc = server

    def incomingConnection(self, socketDescriptor: int, /) -> None:
        """``socketDescriptor`` is the accepted socket's descriptor, or on Windows the pipe's
        handle: the server's own connections serve it, never a ``QLocalSocket``. A client that
        is not this user's is closed unanswered: the socket's directory is private, but its
        mode is no promise (a user or a tool may change it)."""
        if sys.platform == "win32":
            from domi_desktop.frontdoor.rpc.peercred import pipe_client_refused, windows_users

            users = windows_users()
            refused = pipe_client_refused(socketDescriptor, users)
            if refused is not None:
                users.close(socketDescriptor)
                self._rpc.refused(refused)
                return
            self._rpc.adopt(_PipeConnection(self._rpc, socketDescriptor))
        else:
            from domi_desktop.frontdoor.rpc.peercred import unix_client_refused

            refused = unix_client_refused(socketDescriptor)
            if refused is not None:
                os.close(socketDescriptor)
                self._rpc.refused(refused)
                return
            self._rpc.adopt(_UnixConnection(self._rpc, socketDescriptor))


class RpcServer(QObject):
    """Accepts clients on the local socket and hands their lines to the dispatcher."""

    def __init__(
        self,
        methods: Mapping[str, Callable[[Mapping[str, Any]], Any]],
        app_methods: Mapping[str, AppMethod[Connection]],
        call_soon: Callable[[Callable[[], None]], None],
        parent: QObject | None = None,
    ) -> None:
        """``call_soon`` runs a callback on the app's loop, from any thread (``ports.Loop``)."""
        super().__init__(parent)
        self.call_soon = call_soon
        self.dispatcher: Dispatcher[Connection] = Dispatcher(methods, app_methods)
        self._server = _Listener(self)
        self._server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self._server.newConnection.connect(self._accept)
        self._name: str | None = None
        self._inode: tuple[int, int] | None = None
        self.connections: list[Connection] = []
        self.max_connections = _cap()
        self.max_subscribers = max(1, self.max_connections // SUBSCRIBER_SHARE)
        self._subscribers: list[Connection] = []
        """Oldest first."""
        self.dropped = 0
        self.rejected = 0
        """Clients refused: not this user's."""

    def listen(self, name: str) -> bool:
        self._name = name
        return self._listen()

    def _listen(self) -> bool:
        assert self._name is not None
        try:
            recreate_socket_dir(Path(self._name).parent)
        except SocketDirError as error:
            log.error("cannot listen on %s: %s", self._name, error)
            return False
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

    def broadcast(self, method: str, params: Callable[[], Mapping[str, Any]]) -> None:
        """An event to every subscriber (``events.subscribe``); its ``params`` are made only when
        someone listens (a catch-up's 20,000 events, mostly to no one)."""
        if not self._subscribers:
            return
        message = {"jsonrpc": "2.0", "method": method, "params": params()}
        for connection in list(self._subscribers):
            connection.send(message)

    def forget(self, connection: Connection) -> None:
        if connection in self._subscribers:
            self._subscribers.remove(connection)
        if connection in self.connections:
            self.connections.remove(connection)
            self.ensure_listening()

    def adopt(self, connection: Connection) -> None:
        self.connections.append(connection)
        while len(self.connections) > self.max_connections:
            # Subscribers have a share of their own (``subscribed``), so there is always a
            # request client here: idle before owed an answer, the oldest first.
            victim = min(
                (c for c in self.connections if not c.subscribed),
                key=lambda c: (c.pending > 0, c.last_active),
            )
            self.dropped += 1
            if self.dropped % 100 == 1:
                log.warning(
                    "more than %d RPC clients: dropping the oldest idle ones (%d so far)",
                    self.max_connections,
                    self.dropped,
                )
            victim.close()

    def refused(self, why: str) -> None:
        self.rejected += 1
        if self.rejected % 100 == 1:
            log.warning("the RPC socket refused %s (%d so far)", why, self.rejected)

    def subscribed(self, connection: Connection) -> None:
        """Keep subscribers to their share, dropping the oldest: event streams left behind (a
        forgotten ``events --follow``) can never lock request clients out, and the one just
        started works."""
        self._subscribers.append(connection)
        while len(self._subscribers) > self.max_subscribers:
            log.warning("more than %d event subscribers: dropping the oldest", self.max_subscribers)
            victim = self._subscribers.pop(0)
            reason = f"more than {self.max_subscribers} event subscribers: the oldest is let go"
            victim.send({"jsonrpc": "2.0", "method": EVENTS_CLOSED, "params": {"reason": reason}})
            victim.close()  # what the send wrote at once still reaches the client

    def _accept(self) -> None:
        self.ensure_listening()


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
