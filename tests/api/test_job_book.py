"""The job book: pids recorded by many runs' threads at once, in a few transactions."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from typing import Any

from domi_desktop.api.jobs import JobBook


class SlowWriter:
    """A transaction takes 20 ms (an fsync behind a wake's write): the queue builds up."""

    def __init__(self, fail: bool = False) -> None:
        self.batches: list[list[int]] = []
        self.fail = fail

    def record_jobs(self, jobs: Sequence[tuple[int, int, str | None]]) -> None:
        time.sleep(0.02)
        if self.fail:
            raise OSError("disk full")
        self.batches.append([run_id for run_id, _pid, _started in jobs])

    def close(self) -> None:
        pass


class Store:
    def __init__(self, writer: SlowWriter) -> None:
        self._writer = writer

    def writer(self) -> SlowWriter:
        return self._writer


def record_from_threads(book: JobBook, count: int) -> list[BaseException | None]:
    outcomes: list[BaseException | None] = [None] * count
    start = threading.Barrier(count)

    def run(index: int) -> None:
        start.wait()
        try:
            book.record(index, os.getpid())
        except BaseException as error:
            outcomes[index] = error

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return outcomes


def test_a_hundred_starts_at_once_are_recorded_in_a_few_transactions() -> None:
    writer = SlowWriter()
    book = JobBook(Store(writer))  # type: ignore[arg-type]
    assert record_from_threads(book, 100) == [None] * 100
    assert sorted(run for batch in writer.batches for run in batch) == list(range(100))
    assert len(writer.batches) < 20


def test_a_failed_write_is_reported_to_every_thread_of_its_batch() -> None:
    book = JobBook(Store(SlowWriter(fail=True)))  # type: ignore[arg-type]
    outcomes: list[Any] = record_from_threads(book, 10)
    assert all(isinstance(outcome, OSError) for outcome in outcomes)


def test_a_single_start_is_written_at_once() -> None:
    writer = SlowWriter()
    book = JobBook(Store(writer))  # type: ignore[arg-type]
    book.record(7, os.getpid())
    assert writer.batches == [[7]]
