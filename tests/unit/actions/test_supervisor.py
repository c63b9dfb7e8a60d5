"""The job supervisor: one thread for every command job (its loop, its timers), and a burst of
jobs that does not become a crowd of threads."""

from __future__ import annotations

import gc
import os
import sys
import threading
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from domi_desktop.actions import ActionRequest, ActionRunner
from domi_desktop.actions.supervisor import Supervisor, supervisor
from domi_desktop.model import CommandAction, RunStatus

MakeRequest = Callable[..., ActionRequest]


@pytest.fixture
def loop() -> Iterator[Supervisor]:
    """A supervisor of the test's own (not the process's), stopped at the end."""
    made = Supervisor()
    yield made
    assert made.close(), "the supervisor's thread did not end"


def test_calls_from_any_thread_run_on_the_supervisors_thread_in_order(loop: Supervisor) -> None:
    seen: list[tuple[int, str]] = []
    done = threading.Event()

    def post(number: int) -> None:
        loop.call_soon(lambda: seen.append((number, threading.current_thread().name)))

    threads = [threading.Thread(target=post, args=(n,)) for n in range(50)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    loop.call_soon(done.set)
    assert done.wait(10)
    assert sorted(number for number, _ in seen) == list(range(50))
    assert {name for _, name in seen} == {"domi-jobs"}


def test_timers_run_in_time_order_and_a_cancelled_one_never_runs_nor_keeps_its_callback(
    loop: Supervisor,
) -> None:
    order: list[str] = []
    done = threading.Event()

    class Held:
        def __call__(self) -> None:
            order.append("cancelled")

    alive: list[weakref.ref[Held]] = []

    def arm_and_cancel() -> None:
        held = Held()
        alive.append(weakref.ref(held))
        loop.call_later(0.02, held).cancel()

    def arm(delay: float, callback: Callable[[], None]) -> Callable[[], None]:
        def on_its_thread() -> None:
            loop.call_later(delay, callback)

        return on_its_thread

    loop.call_soon(arm(0.05, lambda: order.append("second")))
    loop.call_soon(arm(0.01, lambda: order.append("first")))
    loop.call_soon(arm_and_cancel)
    loop.call_soon(arm(0.1, done.set))
    assert done.wait(10)
    gc.collect()
    assert order == ["first", "second"]
    assert alive[0]() is None  # let go at once, not when its time came


def test_a_callback_that_raises_leaves_the_loop_running(
    loop: Supervisor, caplog: pytest.LogCaptureFixture
) -> None:
    done = threading.Event()

    def broken() -> None:
        raise RuntimeError("a bug")

    loop.call_soon(broken)
    loop.call_soon(done.set)
    assert done.wait(10)
    assert "RuntimeError: a bug" in caplog.text


def test_reports_are_told_in_order_once_the_turn_is_over_even_when_nothing_else_is_due(
    loop: Supervisor,
) -> None:
    told: list[tuple[str, str]] = []
    done = threading.Event()

    def a_turn() -> None:
        loop.report(lambda: told.append(("first", threading.current_thread().name)))
        loop.report(lambda: told.append(("second", threading.current_thread().name)))
        loop.report(done.set)  # the last thing of all: the loop then waits with nothing due
        told.append(("the turn goes on", threading.current_thread().name))

    loop.call_soon(a_turn)
    assert done.wait(10)
    assert told == [
        ("the turn goes on", "domi-jobs"),
        ("first", "domi-jobs"),
        ("second", "domi-jobs"),
    ]


@pytest.mark.posix_only  # POSIX shell
def test_a_burst_of_200_running_jobs_is_not_a_crowd_of_threads(
    runner: ActionRunner, make_request: MakeRequest, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    # A slow poll: 200 shells forking a sleep every 50 ms loaded a 2-core machine so much that
    # the starts themselves outlasted the test's patience.
    action = CommandAction(shell=f"while [ ! -e {go} ]; do sleep 1; done; echo ran")
    before = threading.active_count()
    started = [runner.start(make_request(action, run_id=n), lambda _r: None) for n in range(200)]
    try:
        ready = threading.Event()
        supervisor().call_soon(ready.set)  # every start before this call has been made
        assert ready.wait(60)
        assert all(running.pid is not None for running in started)
        # The supervisor and the job book's own threads at most: not one (or three) per job.
        # Where the OS has no pidfd (macOS), a thread waits for each job's exit instead.
        if sys.platform == "linux":
            assert threading.active_count() - before <= 2
    finally:  # the jobs end on their own when the test fails too (the runner fixture stops them)
        go.touch()
    results = [running.wait(60) for running in started]
    assert [r.status if r else None for r in results] == [RunStatus.succeeded] * 200
    assert {r.output_tail for r in results if r} == {"ran\n"}


@pytest.mark.linux_only  # the pidfd is Linux's; elsewhere this is the way
def test_without_a_pidfd_a_thread_waits_for_the_exit_and_the_run_ends_the_same(
    runner: ActionRunner,
    make_request: MakeRequest,
    monkeypatch: pytest.MonkeyPatch,
    wait_until: Callable[[Callable[[], bool]], None],
) -> None:
    def no_pidfd(_pid: int, _flags: int = 0) -> int:
        raise OSError(38, "Function not implemented")  # a kernel before 5.3

    monkeypatch.setattr(os, "pidfd_open", no_pidfd)
    result = runner.run(make_request(CommandAction(shell="echo out; exit 3")))
    assert (result.status, result.reason, result.exit_code) == (
        RunStatus.failed,
        "exit code 3",
        3,
    )
    assert result.output_tail == "out\n[domi-desktop] exit code 3\n"
    stopped = runner.start(make_request(CommandAction(argv=("sleep", "30")), run_id=2), print)
    wait_until(lambda: stopped.pid is not None)
    stopped.stop("stopped: by the test")
    ended = stopped.wait(10)
    assert ended is not None
    assert (ended.status, ended.exit_code) == (RunStatus.interrupted, -15)
