"""A run's output on its way to the log file and the database: masked, then written, then kept."""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path
from types import TracebackType

from domi_desktop.actions.model import TAIL_BYTES
from domi_desktop.secrets import Masker

NOTE_PREFIX = "[domi-desktop] "
"""Lines that domi-desktop adds to a log (why a run ended, a truncated response...) start so."""


class OutputCapture:
    """Masks output, appends it to the run's log file (mode 0600) and keeps its last ``TAIL_BYTES``.

    Thread-safe: a reader thread feeds the job's output while the worker adds notes. Once closed,
    further output is dropped (a process that escaped the job may still hold the pipe open).
    A log that cannot be written (a full disk) does not stop the run: the tail is still kept, and
    ``log_error`` says what went wrong.
    """

    def __init__(self, log_path: Path, masker: Masker) -> None:
        log_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        # The log may quote anything the job printed: readable by the user only, from the start.
        flags = (
            os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0)
        )  # Windows: no \r\n
        fd = os.open(log_path, flags, 0o600)
        os.chmod(log_path, 0o600)  # an existing file keeps its mode through O_CREAT
        self._file = os.fdopen(fd, "wb")
        self._masker = masker
        self._stream = masker.stream()
        self._tail = bytearray()
        self._lock = threading.Lock()
        self._closed = False
        self._at_line_start = True
        self.log_error: str | None = None

    def write(self, data: bytes) -> None:
        with self._lock:
            if not self._closed:
                self._emit(self._stream.feed(data))

    def note(self, text: str) -> None:
        """Add a line of domi-desktop's own, after everything written so far."""
        with self._lock:
            if self._closed:
                return
            self._emit(self._stream.flush())
            line_break = "" if self._at_line_start else "\n"
            self._emit(f"{line_break}{NOTE_PREFIX}{self._masker.mask(text)}\n".encode())

    def tail(self) -> str:
        with self._lock:
            # Cutting at a byte count may split a character: replace it rather than fail.
            return self._tail.decode(errors="replace")

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._emit(self._stream.flush())
                self._closed = True
                with contextlib.suppress(OSError):  # the data that failed to flush is reported
                    self._file.close()

    def __enter__(self) -> OutputCapture:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _emit(self, data: bytes) -> None:
        if not data:
            return
        if self.log_error is None:
            try:
                self._file.write(data)
                # Flushed at once: the log of a running job can be opened from the history.
                self._file.flush()
            except OSError as error:
                self.log_error = error.strerror or str(error)
        self._tail += data
        del self._tail[:-TAIL_BYTES]
        self._at_line_start = data.endswith(b"\n")
