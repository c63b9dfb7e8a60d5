"""A run's output on its way to the log file and the database: masked, then written, then kept."""

from __future__ import annotations

import contextlib
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from domi_desktop.actions.model import TAIL_BYTES
from domi_desktop.secrets import Masker

NOTE_PREFIX = "[domi-desktop] "
"""Lines that domi-desktop adds to a log (why a run ended, a truncated response...) start so."""

MIB = 1024 * 1024
_LINE_SEARCH = 64 * 1024
"""How far into the kept end of a cut log to look for a line start to begin it at."""


class HeldSecrets:
    """Secret values this process holds besides a run's own (a monitor's API key): masked in
    every run's output too, since any job may print one."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: frozenset[str] = frozenset()
        self._masker = Masker(())

    def add(self, value: str) -> None:
        with self._lock:
            if value not in self._values:
                self._values = self._values | {value}
                self._masker = Masker(self._values)

    def values(self) -> frozenset[str]:
        with self._lock:
            return self._values

    def masker(self) -> Masker:
        with self._lock:
            return self._masker


HELD_SECRETS = HeldSecrets()
"""The process's one set: the monitor adds the keys it reads, every capture masks them."""


@dataclass(frozen=True, slots=True)
class LogLimits:
    """How much of a run's output its log keeps: the first ``head`` and the last ``tail`` bytes.

    A job printing 500 MB must not write a 500 MB log. The start says how the run began, the end
    how it ended; between them a line says how much was cut. While the run goes on the file may
    hold up to ``2 * tail`` after its head (the end is moved down once per ``tail`` bytes, so each
    byte is copied at most once); when it ends, exactly the last ``tail``.
    """

    head: int = 1 * MIB
    tail: int = 4 * MIB

    def __post_init__(self) -> None:
        if self.head < 0 or self.tail < 1:
            raise ValueError(f"log limits need head >= 0 and tail >= 1, not {self}")


DEFAULT_LOG_LIMITS = LogLimits()


class OutputCapture:
    """Masks output, appends it to the run's log file (mode 0600) and keeps its last ``TAIL_BYTES``.

    The log keeps what ``LogLimits`` allows: past its head, the middle is cut out as the output
    grows, a line at the cut says how much went, and a note at the end says the log was cut.

    The file is made when the first byte is to be written: a run that prints nothing (and ends
    well, with no note) leaves none. A silent ``* * * * *`` job would leave 1,440 empty files a
    day, and making one was most of what starting a quiet job cost the app (``runner_bench``).

    Thread-safe: a reader thread feeds the job's output while the worker adds notes. Once closed,
    further output is dropped (a process that escaped the job may still hold the pipe open).
    A log that cannot be made or written (a full disk, a folder gone) does not stop the run: the
    tail is still kept, and ``log_error`` says what went wrong.
    """

    def __init__(
        self, log_path: Path, masker: Masker, limits: LogLimits = DEFAULT_LOG_LIMITS
    ) -> None:
        self._path = log_path
        self._fd: int | None = None
        self._limits = limits
        self._total = 0
        """Bytes of output and notes so far, whether kept or cut."""
        self._head_written = 0
        self._head_ends_line = True
        self._marker_size = 0
        """The size of the line that says what was cut, right after the head; 0 until a cut."""
        self._rest = 0
        """Bytes in the file after the head and the marker."""
        self._cut = 0
        self._masker = masker
        self._stream = masker.stream()
        self._held = HELD_SECRETS.masker()
        self._held_stream = self._held.stream()
        self._tail = bytearray()
        self._lock = threading.Lock()
        self._closed = False
        self._at_line_start = True
        self.log_error: str | None = None

    def write(self, data: bytes) -> None:
        with self._lock:
            if not self._closed:
                self._emit(self._held_stream.feed(self._stream.feed(data)))

    def note(self, text: str) -> None:
        """Add a line of domi-desktop's own, after everything written so far."""
        with self._lock:
            if self._closed:
                return
            self._emit(self._flush())
            self._emit_note(text)

    def _emit_note(self, text: str) -> None:
        line_break = "" if self._at_line_start else "\n"
        masked = self._held.mask(self._masker.mask(text))
        self._emit(f"{line_break}{NOTE_PREFIX}{masked}\n".encode())

    def _flush(self) -> bytes:
        return self._held_stream.feed(self._stream.flush()) + self._held_stream.flush()

    def tail(self) -> str:
        with self._lock:
            # Cutting at a byte count may split a character: replace it rather than fail.
            return self._tail.decode(errors="replace")

    @property
    def cut(self) -> int:
        """How many bytes of output the log has left out so far."""
        with self._lock:
            return self._cut

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._emit(self._flush())
                if self._cut or self._rest > self._limits.tail:
                    # Said at the end, so the history's tail of the output shows it too.
                    self._emit_note(
                        f"the output was {_size(self._total)}; its log keeps the first "
                        f"{_size(self._limits.head)} and the last {_size(self._limits.tail)}"
                    )
                if (
                    self._fd is not None
                    and self.log_error is None
                    and self._rest > self._limits.tail
                ):
                    try:
                        self._cut_middle(self._fd)
                    except OSError as error:
                        self.log_error = _describe(error)
                self._closed = True
                if self._fd is not None:
                    with contextlib.suppress(OSError):  # a write that failed is reported already
                        os.close(self._fd)

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
        self._total += len(data)
        if self.log_error is None:
            try:
                # Unbuffered: the log of a running job can be opened from the history.
                self._write_log(data)
            except OSError as error:
                self.log_error = _describe(error)
        self._tail += data
        del self._tail[:-TAIL_BYTES]
        self._at_line_start = data.endswith(b"\n")

    def _write_log(self, data: bytes) -> None:
        fd = self._fd
        if fd is None:
            fd = self._fd = _open_log(self._path)
        room = self._limits.head - self._head_written
        if room > 0:
            head, data = data[:room], data[room:]
            _write_all(fd, head)
            self._head_written += len(head)
            self._head_ends_line = head.endswith(b"\n")
        if data:
            _write_all(fd, data)
            self._rest += len(data)
            if self._rest > 2 * self._limits.tail:
                self._cut_middle(fd)

    def _cut_middle(self, fd: int) -> None:
        """Keep the head and the last ``tail`` bytes; put the line saying what went between."""
        tail = self._limits.tail
        end = self._head_written + self._marker_size + self._rest
        # One byte more: whether the kept part starts at a line start.
        os.lseek(fd, end - tail - 1, os.SEEK_SET)
        before, kept = _read_up_to(fd, 1), _read_up_to(fd, tail)
        if before != b"\n":
            start = kept.find(b"\n", 0, _LINE_SEARCH)
            if start >= 0:
                kept = kept[start + 1 :]
        self._cut += self._rest - len(kept)
        line_break = "" if self._head_ends_line else "\n"
        marker = (
            f"{line_break}{NOTE_PREFIX}... {self._cut:,} bytes of output cut here: the log keeps "
            f"the first {_size(self._limits.head)} and the last {_size(tail)} ...\n"
        ).encode()
        os.lseek(fd, self._head_written, os.SEEK_SET)
        _write_all(fd, marker + kept)
        os.ftruncate(fd, self._head_written + len(marker) + len(kept))
        self._marker_size = len(marker)
        self._rest = len(kept)


def _open_log(log_path: Path) -> int:
    # The log may quote anything the job printed: readable by the user only, from the start.
    # Read too: cutting the middle out moves the end of the log down.
    flags = os.O_RDWR | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0)  # Windows: no \r\n
    try:
        fd = os.open(log_path, flags, 0o600)
    except OSError:
        # The folder is made when the log cannot be opened without it, not before every run; a
        # failure is then the one that making it and opening the log in turn gives.
        log_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(log_path, flags, 0o600)
    try:
        # An existing file keeps its mode through O_CREAT; a new one is 0600 unless the umask
        # takes from the user's own bits. Windows reports no such mode: it is always set there.
        if os.fstat(fd).st_mode & 0o777 != 0o600:
            os.chmod(log_path, 0o600)
    except OSError:
        os.close(fd)
        raise
    return fd


def _describe(error: OSError) -> str:
    text = error.strerror or str(error)
    # A write's error names no file; the log's making does, and which folder failed matters.
    return text if error.filename is None else f"{text}: {error.filename}"


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _read_up_to(fd: int, size: int) -> bytes:
    """``size`` bytes from the file position, fewer only at the end of the file."""
    parts: list[bytes] = []
    while size > 0 and (part := os.read(fd, size)):
        parts.append(part)
        size -= len(part)
    return b"".join(parts)


def _size(count: int) -> str:
    if count >= MIB:
        return f"{count / MIB:.1f} MiB"
    if count >= 1024:
        return f"{count / 1024:.1f} KiB"
    return f"{count} bytes"
