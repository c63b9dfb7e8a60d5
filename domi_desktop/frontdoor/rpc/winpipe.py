"""One client of the app's named pipe (Windows), served by a thread of its own.

``QLocalServer`` still creates the pipe (its user-only DACL, a new instance after each accept); the
accepted handle is served here, not by ``QLocalSocket``. Qt 6's pipe reader starts each next read
from the thread pool's callback thread, and a read is cancelled when the thread that started it
exits. Windows keeps a pool thread that has I/O pending; Wine 8 retires one idle for 5 s once the
pool has grown, so on a busy machine every client that waited longer than that for an answer
(``run-now`` of a long job, ``events``) lost its connection with "Unknown error 995". Here one
thread, living as long as the connection, starts every read and write of its handle.
"""

from __future__ import annotations

import ctypes
import logging
import sys
import threading
from collections.abc import Callable
from typing import Any

from domi_desktop.ffi import Signature, load_windows

log = logging.getLogger(__name__)

CHUNK = 64 * 1024
INFINITE = 0xFFFFFFFF
WAIT_OBJECT_0 = 0
ERROR_IO_PENDING = 997
ERROR_MORE_DATA = 234

HANDLE, DWORD, BOOL = ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int32


class OVERLAPPED(ctypes.Structure):
    _fields_ = (
        ("Internal", ctypes.c_void_p),
        ("InternalHigh", ctypes.c_void_p),
        ("Offset", DWORD),
        ("OffsetHigh", DWORD),
        ("hEvent", HANDLE),
    )


_OVERLAPPED_P = ctypes.POINTER(OVERLAPPED)
_DWORD_P = ctypes.POINTER(DWORD)
KERNEL32: dict[str, Signature] = {
    "CreateEventW": ((ctypes.c_void_p, BOOL, BOOL, ctypes.c_wchar_p), HANDLE),
    "SetEvent": ((HANDLE,), BOOL),
    "ReadFile": ((HANDLE, ctypes.c_void_p, DWORD, _DWORD_P, _OVERLAPPED_P), BOOL),
    "WriteFile": ((HANDLE, ctypes.c_void_p, DWORD, _DWORD_P, _OVERLAPPED_P), BOOL),
    "GetOverlappedResult": ((HANDLE, _OVERLAPPED_P, _DWORD_P, BOOL), BOOL),
    "WaitForMultipleObjects": ((DWORD, ctypes.POINTER(HANDLE), BOOL, DWORD), DWORD),
    "CancelIoEx": ((HANDLE, _OVERLAPPED_P), BOOL),
    "CloseHandle": ((HANDLE,), BOOL),
}


class _Operation:
    """One overlapped read or write: its event, its ``OVERLAPPED`` and its buffer, kept alive
    while Windows may still write into them."""

    def __init__(self, api: Any, handle: int) -> None:
        self._api = api
        self._handle = handle
        self.overlapped = OVERLAPPED()
        self.overlapped.hEvent = _event(api, manual_reset=True)
        self.buffer: ctypes.Array[ctypes.c_char] | None = None

    @property
    def event(self) -> int:
        return int(self.overlapped.hEvent)

    @property
    def pending(self) -> bool:
        return self.buffer is not None

    def start(self, call: Any, buffer: ctypes.Array[ctypes.c_char], size: int) -> int:
        """0 once the operation is under way, else the Windows error that refused it."""
        self.buffer = buffer
        if call(self._handle, buffer, size, None, ctypes.byref(self.overlapped)):
            return 0  # done at once; the event is set, the result is read as for a pending one
        code = _error()
        if code == ERROR_IO_PENDING:
            return 0
        self.buffer = None
        return code

    def result(self, wait: bool = False) -> tuple[bytes, int]:
        """What the finished operation moved (the buffer's first bytes), and 0 or its error."""
        moved = DWORD()
        ok = self._api.GetOverlappedResult(
            self._handle, ctypes.byref(self.overlapped), ctypes.byref(moved), wait
        )
        code = 0 if ok else _error()
        data = b"" if self.buffer is None else self.buffer.raw[: moved.value]
        self.buffer = None
        return data, 0 if code == ERROR_MORE_DATA else code

    def close(self) -> None:
        self._api.CloseHandle(self.overlapped.hEvent)


class PipeChannel:
    """Reads and writes one pipe handle on its own thread. ``on_data`` gets each chunk read and
    ``on_end`` is called once the client is gone (or the channel closed), both on that thread."""

    def __init__(
        self, handle: int, on_data: Callable[[bytes], None], on_end: Callable[[], None]
    ) -> None:
        self._api = load_windows("kernel32", KERNEL32)
        self._handle = handle
        self._on_data = on_data
        self._on_end = on_end
        self._lock = threading.Condition()
        self._output = bytearray()
        """Not yet written, the bytes of the write under way first."""
        self._closing = False
        self._done = False
        """The thread has ended and closed its handles: nothing may touch them (a closed
        handle's number is soon another object's)."""
        self._wake = _event(self._api, manual_reset=False)
        self._thread = threading.Thread(target=self._serve, name="rpc-pipe", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def write(self, data: bytes) -> None:
        with self._lock:
            if self._done:
                return
            self._output += data
            self._api.SetEvent(self._wake)

    def queued(self) -> int:
        with self._lock:
            return len(self._output)

    def flush(self, timeout: float) -> None:
        """Wait (at most ``timeout`` s) until what is queued is in the pipe."""
        with self._lock:
            self._lock.wait_for(lambda: not self._output, timeout)

    def close(self) -> None:
        """Stop serving: the thread cancels what is under way and closes the handle. What was
        already written stays readable by the client (no ``DisconnectNamedPipe``)."""
        with self._lock:
            self._closing = True
            if not self._done:
                self._api.SetEvent(self._wake)

    def _serve(self) -> None:
        operations: list[_Operation] = []
        try:
            for _ in ("read", "write"):
                operations.append(_Operation(self._api, self._handle))
            self._pump(*operations)
        except Exception:  # a failed Win32 call ends this client, never the app
            log.exception("serving an RPC pipe client failed")
        finally:
            self._api.CancelIoEx(self._handle, None)
            for operation in operations:
                if operation.pending:
                    operation.result(wait=True)
                operation.close()
            with self._lock:
                self._done = True
                self._output.clear()
                self._lock.notify_all()
                self._api.CloseHandle(self._wake)
                self._api.CloseHandle(self._handle)
            self._on_end()

    def _pump(self, read: _Operation, write: _Operation) -> None:
        # One buffer for every read: what a read filled is copied out before the next starts.
        inbox = ctypes.create_string_buffer(CHUNK)
        while True:
            if not read.pending and read.start(self._api.ReadFile, inbox, CHUNK):
                return  # the client has gone (ERROR_BROKEN_PIPE) or the pipe failed
            with self._lock:
                if self._closing:
                    return
                chunk = b"" if write.pending else bytes(self._output[:CHUNK])
            if chunk and write.start(
                self._api.WriteFile, ctypes.create_string_buffer(chunk, len(chunk)), len(chunk)
            ):
                return
            waits = [read.event, self._wake, *([write.event] if write.pending else [])]
            handles = (HANDLE * len(waits))(*waits)
            index = self._api.WaitForMultipleObjects(len(waits), handles, False, INFINITE)
            if index == WAIT_OBJECT_0:
                data, error = read.result()
                if error:
                    return
                if data:
                    self._on_data(data)
            elif index == WAIT_OBJECT_0 + 2:
                data, error = write.result()
                if error:
                    return
                with self._lock:
                    del self._output[: len(data)]
                    self._lock.notify_all()
            elif index != WAIT_OBJECT_0 + 1:
                raise OSError(f"WaitForMultipleObjects failed (Windows error {_error()})")


def _event(api: Any, *, manual_reset: bool) -> int:
    event = api.CreateEventW(None, manual_reset, False, None)
    if not event:
        raise OSError(f"CreateEventW failed (Windows error {_error()})")
    return int(event)


if sys.platform == "win32":

    def _error() -> int:
        return ctypes.get_last_error()

else:

    def _error() -> int:
        return 0  # never called: load_windows refuses to load kernel32 off Windows
