"""The CLI's side of the app's socket: blocking JSON-RPC calls, and event streams."""

from __future__ import annotations

import itertools
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from domi_desktop.errors import DomiError, NotFoundError, ParamError
from domi_desktop.store import resolve_data_dir

CONNECT_TIMEOUT_MS = 1000
CALL_TIMEOUT_MS = 30_000


class AppError(DomiError):
    """The app answered with an error."""


class RpcClient:
    def __init__(self, socket: Any, name: str) -> None:
        self._socket = socket
        self.name = name
        self._ids = itertools.count(1)
        self._buffer = bytearray()

    def call(
        self, method: str, params: dict[str, Any], *, timeout_ms: int = CALL_TIMEOUT_MS
    ) -> Any:
        request_id = next(self._ids)
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        while True:
            message = self.receive(timeout_ms)
            if message is None:
                raise AppError(f"the app did not answer {method} in time")
            if message.get("id") != request_id:
                continue  # an event for a subscriber; not ours to handle here
            if "error" in message:
                raise _error(message["error"])
            return message.get("result")

    def send(self, message: dict[str, Any]) -> None:
        self._socket.write(json.dumps(message).encode() + b"\n")
        self._socket.waitForBytesWritten(CALL_TIMEOUT_MS)

    def receive(self, timeout_ms: int) -> dict[str, Any] | None:
        while b"\n" not in self._buffer:
            if not self._socket.bytesAvailable() and not self._socket.waitForReadyRead(timeout_ms):
                return None
            self._buffer += bytes(self._socket.readAll().data())
        end = self._buffer.index(b"\n")
        line = bytes(self._buffer[:end])
        del self._buffer[: end + 1]
        message = json.loads(line)
        return message if isinstance(message, dict) else {"batch": message}

    def events(self) -> Iterator[dict[str, Any]]:
        """Subscribe and yield event notifications until the app goes away."""
        self.call("events.subscribe", {})
        while True:
            message = self.receive(60_000)
            if message is None:
                if self._socket.state() != self._socket.LocalSocketState.ConnectedState:
                    return
                continue
            if "method" in message:
                yield message

    def close(self) -> None:
        self._socket.disconnectFromServer()


def _error(error: Any) -> DomiError:
    message = str(error.get("message", "error")) if isinstance(error, dict) else str(error)
    code = error.get("code") if isinstance(error, dict) else None
    if code == -32602:
        data = error.get("data") or {}
        return ParamError(str(data.get("param", "params")), message.split(": ", 1)[-1])
    if code == -32004:
        return NotFoundError(message)
    return AppError(message)


def connect_to_app(data_dir: str | os.PathLike[str] | None) -> RpcClient | None:
    """A client of the instance running on this data dir, or None when none runs."""
    from domi_desktop.app.instance import socket_name

    directory = resolve_data_dir(data_dir)
    name = socket_name(directory)
    if sys.platform != "win32" and not Path(name).exists():
        return None  # the common case, answered without loading Qt
    from PySide6.QtNetwork import QLocalSocket

    socket = QLocalSocket()
    socket.connectToServer(name)
    if not socket.waitForConnected(CONNECT_TIMEOUT_MS):
        return None  # a stale socket: the app died; the next app start removes it
    return RpcClient(socket, name)
