"""JSON-RPC 2.0 over the app's local socket: one JSON object per line (SPEC §6).

Garbage, a client that disconnects mid-line or floods the socket never stops the app: every
request is answered or the client is dropped, and nothing a client sends can raise out of here.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from typing import Any

from PySide6.QtCore import QObject
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from domi_desktop.errors import DomiError, NotFoundError, ParamError

log = logging.getLogger(__name__)

PROTOCOL_VERSION = 1
MAX_LINE = 1 << 20
"""A request longer than this (1 MiB) without a newline is a flood: the client is dropped."""
MAX_PENDING_OUTPUT = 8 << 20
"""A subscriber that stops reading is dropped once this much output waits for it."""

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = (
    -32700,
    -32600,
    -32601,
    -32602,
    -32603,
)
NOT_FOUND, FAILED = -32004, -32000

Responder = Callable[[Any], None]
AppMethod = Callable[["Connection", Mapping[str, Any], Responder], Any]
"""An app method answers by returning a value, or later through the responder (return DEFER)."""

DEFER = object()


class RpcError(Exception):
    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


class Connection:
    def __init__(self, server: RpcServer, socket: QLocalSocket) -> None:
        self.server = server
        self.socket = socket
        self.buffer = bytearray()
        self.subscribed = False
        self.closed = False
        socket.readyRead.connect(self._read)
        socket.disconnected.connect(self.close)

    def send(self, message: Mapping[str, Any] | list[Any]) -> None:
        if self.closed:
            return
        data = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        if self.socket.bytesToWrite() + len(data) > MAX_PENDING_OUTPUT:
            log.warning("dropping an RPC client that does not read its events")
            self.close()
            return
        self.socket.write(data)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.server.forget(self)
        self.socket.readyRead.disconnect(self._read)
        self.socket.abort()
        self.socket.deleteLater()

    def _read(self) -> None:
        self.buffer += bytes(self.socket.readAll().data())
        while not self.closed:
            end = self.buffer.find(b"\n")
            if end < 0:
                if len(self.buffer) > MAX_LINE:
                    self.send(_error(None, INVALID_REQUEST, "request line too long"))
                    self.socket.flush()
                    self.close()
                return
            line = bytes(self.buffer[:end])
            del self.buffer[: end + 1]
            if line.strip():
                self.server.handle_line(self, line)


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
        self._server = QLocalServer(self)
        self._server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self._server.newConnection.connect(self._accept)
        self.connections: list[Connection] = []

    def listen(self, name: str) -> bool:
        # Only the lock holder calls this, so a leftover socket is a crashed instance's.
        QLocalServer.removeServer(name)
        if not self._server.listen(name):
            log.error("cannot listen on %s: %s", name, self._server.errorString())
            return False
        return True

    def name(self) -> str:
        return self._server.fullServerName()

    def close(self) -> None:
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

    def _accept(self) -> None:
        while self._server.hasPendingConnections():
            socket = self._server.nextPendingConnection()
            self.connections.append(Connection(self, socket))

    def handle_line(self, connection: Connection, line: bytes) -> None:
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            connection.send(_error(None, PARSE_ERROR, "parse error: not a JSON object"))
            return
        if isinstance(message, list):
            if not message:
                connection.send(_error(None, INVALID_REQUEST, "empty batch"))
                return
            replies: list[Any] = []
            for item in message[:100]:
                self._handle(connection, item, replies.append)
            if replies:
                connection.send(replies)
            return
        self._handle(connection, message, connection.send)

    def _handle(self, connection: Connection, message: Any, reply: Callable[[Any], None]) -> None:
        request_id = message.get("id") if isinstance(message, dict) else None
        if not isinstance(request_id, (str, int, type(None))) or isinstance(request_id, bool):
            request_id = None
        notification = isinstance(message, dict) and "id" not in message

        def answer(result: Any) -> None:
            if not notification:
                reply({"jsonrpc": "2.0", "id": request_id, "result": result})

        try:
            method, params = _validate(message)
            if method in self._app_methods:
                result = self._app_methods[method](connection, params, answer)
                if result is not DEFER:
                    answer(result)
                return
            if method not in self._methods:
                raise RpcError(METHOD_NOT_FOUND, f"method not found: {method}")
            answer(self._methods[method](params))
        except RpcError as error:
            if not notification:
                reply(_error(request_id, error.code, error.message, error.data))
        except ParamError as error:
            if not notification:
                reply(_error(request_id, INVALID_PARAMS, str(error), {"param": error.param}))
        except NotFoundError as error:
            if not notification:
                reply(_error(request_id, NOT_FOUND, str(error)))
        except DomiError as error:
            if not notification:
                reply(_error(request_id, FAILED, str(error)))
        except Exception:  # a bug must not take the app down with a client's request
            log.exception("RPC method failed")
            if not notification:
                reply(_error(request_id, INTERNAL_ERROR, "internal error (see the app's log)"))


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
    return method, params


def _error(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}
