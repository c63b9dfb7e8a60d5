"""The job book: pids recorded as jobs start, without waiting for the database, in few transactions."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence

import pytest

from domi_desktop.runtime.jobs import JobBook


class HeldWriter:
    """A transaction that waits for the test (a wake's write holding the lock), or fails."""

    def __init__(self, fail: bool = False) -> None:
        self.batches: list[list[int]] = []
        self.fail = fail
        self.writing = threading.Event()
        self.go_on = threading.Event()
        self.closed = False

    def record_jobs(self, jobs: Sequence[tuple[int, int, str | None]]) -> None:
        self.writing.set()
        assert self.go_on.wait(10)
        if self.fail:
            raise OSError("disk full")
        self.batches.append([run_id for run_id, _pid, _started in jobs])

    def close(self) -> None:
        self.closed = True


class Store:
    def __init__(self, writer: HeldWriter) -> None:
        self._writer = writer

    def writer(self) -> HeldWriter:
        return self._writer


def test_a_start_is_recorded_without_waiting_for_the_database() -> None:
    writer = HeldWriter()
    book = JobBook(Store(writer))  # type: ignore[arg-type]
    book.record(7, os.getpid())  # returns although the transaction is held
    assert writer.writing.wait(10)
    assert writer.batches == []
    writer.go_on.set()
    book.close()
    assert writer.batches == [[7]]
    assert writer.closed


def test_starts_while_a_write_is_held_go_in_the_next_transaction_together() -> None:
    writer = HeldWriter()
    book = JobBook(Store(writer))  # type: ignore[arg-type]
    book.record(0, os.getpid())
    assert writer.writing.wait(10)
    for run_id in range(1, 100):
        book.record(run_id, os.getpid())
    writer.go_on.set()
    book.close()
    assert writer.batches == [[0], list(range(1, 100))]


def test_a_failed_write_is_logged_with_its_runs_and_the_book_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    writer = HeldWriter(fail=True)
    writer.go_on.set()
    book = JobBook(Store(writer))  # type: ignore[arg-type]
    with caplog.at_level(logging.WARNING):
        book.record(3, os.getpid())
        book.record(4, os.getpid())
        book.close()
    assert "could not be recorded: disk full" in caplog.text
    assert "runs 3" in caplog.text
    assert writer.closed
