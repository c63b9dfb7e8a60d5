"""A monitor on loopback whose answers a test chooses: proper HTTP, bytes that are not HTTP, an
answer trickled a byte at a time, or none at all (the request held open)."""

from __future__ import annotations

import socket
import socketserver
import threading
from typing import Any

PROPER = "proper"
GARBAGE = "garbage"
TRICKLE = "trickle"
SILENT = "silent"


class StandIn:
    def __init__(self, mode: str = PROPER) -> None:
        self.mode = mode
        self.lock = threading.Lock()
        self.connections = 0
        self.received: list[tuple[str, bytes]] = []
        """Requests answered properly: path, body."""
        self.closing = threading.Event()
        self._server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="standin")

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def count(self) -> int:
        with self.lock:
            return self.connections

    def paths(self) -> list[str]:
        with self.lock:
            return [path for path, _body in self.received]

    def __enter__(self) -> StandIn:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.closing.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(10)


def _handler(standin: StandIn) -> type[socketserver.BaseRequestHandler]:
    class Handler(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            sock: socket.socket = self.request
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = sock.recv(65536)
                if not chunk:
                    return
                head += chunk
            head, _, body = head.partition(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            length = next(
                (int(line.split(":", 1)[1]) for line in lines
                 if line.lower().startswith("content-length:")), 0,
            )  # fmt: skip
            while len(body) < length:
                chunk = sock.recv(65536)
                if not chunk:
                    return
                body += chunk
            with standin.lock:
                standin.connections += 1
                mode = standin.mode
            if mode == GARBAGE:
                sock.sendall(b"\x00\xff<html>Sign in to the Wi-Fi</html>\r\n\r\n")
            elif mode == TRICKLE:
                sock.sendall(b"HTTP/1.1 200 OK\r\n")
                while not standin.closing.wait(0.2):
                    try:
                        sock.sendall(b"X")
                    except OSError:
                        return
            elif mode == SILENT:
                standin.closing.wait()
            else:
                with standin.lock:
                    standin.received.append((lines[0].split(" ")[1], body))
                sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nOK")

        def finish(self, *_args: Any) -> None:
            pass

    return Handler
