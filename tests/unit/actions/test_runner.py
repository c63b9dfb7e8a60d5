"""The runner's API: background threads, callbacks, stop, secrets from a store, odd requests."""

from __future__ import annotations

import dataclasses
import os
import signal
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from domi_desktop.actions import ActionRequest, ActionResult, ActionRunner
from domi_desktop.actions.supervisor import supervisor
from domi_desktop.clock import SystemClock
from domi_desktop.model import NOT_STARTED_LATE, CommandAction, RunStatus
from domi_desktop.secrets import MemorySecretStore

pytestmark = pytest.mark.posix_only  # POSIX shells and signals

MakeRequest = Callable[..., ActionRequest]
WaitUntil = Callable[[Callable[[], bool]], None]


def test_start_returns_at_once_and_calls_back_on_another_thread(
    runner: ActionRunner, make_request: MakeRequest, tmp_path: Path
) -> None:
    # The job waits for the test to create a file: the test thread must be free to do it.
    action = CommandAction(
        shell="while [ ! -e go ]; do sleep 0.01; done; echo went", cwd=str(tmp_path)
    )
    finished = threading.Event()
    calls: list[tuple[ActionResult, threading.Thread]] = []

    def on_finished(result: ActionResult) -> None:
        calls.append((result, threading.current_thread()))
        finished.set()

    running = runner.start(make_request(action), on_finished)
    assert running.wait(0.05) is None
    assert not calls
    (tmp_path / "go").touch()
    assert finished.wait(10)
    result, thread = calls[0]
    assert thread is not threading.main_thread()
    assert thread is not threading.current_thread()
    assert result.status is RunStatus.succeeded
    assert result.output_tail == "went\n"
    assert running.wait(10) is result


def test_stop_ends_the_run_interrupted_with_the_callers_reason(
    runner: ActionRunner,
    make_request: MakeRequest,
    wait_until: WaitUntil,
    gone: Callable[[int], bool],
) -> None:
    running = runner.start(make_request(CommandAction(argv=("sleep", "300"))), lambda _r: None)
    wait_until(lambda: running.pid is not None)
    running.stop("stopped: replaced by a newer run")
    result = running.wait(60)
    assert result is not None
    assert result.status is RunStatus.interrupted
    assert result.reason == "stopped: replaced by a newer run"
    assert result.exit_code == -15  # the SIGTERM, not the SIGKILL after the grace
    assert running.pid is not None
    wait_until(lambda: gone(running.pid or 0))


def test_stop_after_the_end_changes_nothing(
    runner: ActionRunner, make_request: MakeRequest
) -> None:
    running = runner.start(make_request(CommandAction(argv=("true",))), lambda _r: None)
    before = running.wait(10)
    running.stop("too late")
    assert running.wait(10) is before
    assert before is not None
    assert before.status is RunStatus.succeeded


class BlockingStore(MemorySecretStore):
    """A store whose reads wait for the test, like an OS keyring showing an unlock prompt."""

    def __init__(self) -> None:
        super().__init__({"api-token": "tok-from-store"})
        self.reading = threading.Event()
        self.answer = threading.Event()

    def get(self, name: str) -> str:
        self.reading.set()
        self.answer.wait(10)
        return super().get(name)


def test_secrets_are_read_on_the_runs_thread_and_a_stop_meanwhile_skips_the_job(
    runner: ActionRunner, make_request: MakeRequest, tmp_path: Path
) -> None:
    store = BlockingStore()
    action = CommandAction(
        shell="touch started", cwd=str(tmp_path), secret_env=(("TOKEN", "api-token"),)
    )
    running = runner.start(make_request(action), lambda _r: None, secrets=store)
    assert store.reading.wait(10)  # start() returned while the store was still being read
    running.stop("stopped: schedule paused")
    store.answer.set()
    result = running.wait(10)
    assert result is not None
    assert result.status is RunStatus.interrupted
    assert result.reason == "stopped: schedule paused"
    assert result.exit_code is None
    assert not (tmp_path / "started").exists()


def test_secrets_from_a_store_reach_the_job(
    runner: ActionRunner, make_request: MakeRequest
) -> None:
    store = MemorySecretStore({"api-token": "tok-from-store"})
    action = CommandAction(
        shell='[ "$TOKEN" = tok-from-store ] && echo "got $TOKEN"',
        secret_env=(("TOKEN", "api-token"),),
    )
    result = runner.run(make_request(action), secrets=store)
    assert result.status is RunStatus.succeeded
    assert result.output_tail == "got ***\n"


def test_a_missing_secret_fails_the_run_as_secret_unavailable(
    runner: ActionRunner, make_request: MakeRequest
) -> None:
    action = CommandAction(argv=("true",), secret_env=(("TOKEN", "api-token"),))
    result = runner.run(make_request(action), secrets=MemorySecretStore())
    assert result.status is RunStatus.failed
    assert result.reason is not None
    assert result.reason.startswith("secret unavailable: no secret named 'api-token'")
    assert result.log_path.read_text() == f"[domi-desktop] {result.reason}\n"


def test_secrets_come_either_resolved_or_from_a_store(
    runner: ActionRunner, make_request: MakeRequest
) -> None:
    request = make_request(CommandAction(argv=("true",)), secrets={"TOKEN": "tok-abcdef"})
    with pytest.raises(ValueError, match="either"):
        runner.start(request, lambda _r: None, secrets=MemorySecretStore())


def test_an_invalid_action_fails_the_run(runner: ActionRunner, make_request: MakeRequest) -> None:
    result = runner.run(make_request(CommandAction()))
    assert result.status is RunStatus.failed
    assert result.reason == (
        "invalid action: a command needs either an argument list or a shell line, not both"
    )


def test_a_log_that_cannot_be_made_does_not_stop_the_run_and_its_tail_says_why(
    runner: ActionRunner, tmp_path: Path
) -> None:
    (tmp_path / "a-file").write_text("")
    log_path = tmp_path / "a-file" / "1.log"
    request = ActionRequest(
        action=CommandAction(shell="echo report written"), run_id=1, log_path=log_path
    )
    result = runner.run(request)
    assert result.status is RunStatus.succeeded
    # Opening the log found a file where its folder should be; making the folder then failed.
    assert result.output_tail == (
        "report written\n"
        f"[domi-desktop] the log file could not be written: File exists: {tmp_path / 'a-file'}\n"
    )


def test_a_run_that_prints_nothing_leaves_no_log_file_and_a_failed_one_says_why_in_its_log(
    runner: ActionRunner, make_request: MakeRequest
) -> None:
    quiet = runner.run(make_request(CommandAction(argv=("true",)), run_id=1))
    assert quiet.status is RunStatus.succeeded
    assert quiet.output_tail == ""
    assert not quiet.log_path.exists()

    failed = runner.run(make_request(CommandAction(argv=("false",)), run_id=2))
    assert failed.log_path.read_text() == "[domi-desktop] exit code 1\n"
    talking = runner.run(make_request(CommandAction(shell="echo hello"), run_id=3))
    assert talking.log_path.read_text() == "hello\n"


def test_stop_all_stops_every_run_in_progress(
    runner: ActionRunner, make_request: MakeRequest, wait_until: WaitUntil
) -> None:
    runs = [
        runner.start(make_request(CommandAction(argv=("sleep", "300")), run_id=i), lambda _r: None)
        for i in (1, 2)
    ]
    wait_until(lambda: all(r.pid is not None for r in runs))
    assert set(runner.stop_all("stopped: quitting")) == set(runs)
    results = [r.wait(10) for r in runs]
    assert [r.status if r else None for r in results] == [RunStatus.interrupted] * 2
    assert runner.stop_all("nothing left") == []


def test_stop_never_blocks_its_caller_even_for_a_job_that_ignores_sigterm(
    make_request: MakeRequest, wait_until: WaitUntil
) -> None:
    # Only the SIGKILL after the grace (300 s) could end this job: a stop that waited for the
    # end would not have returned before the test kills it.
    runner = ActionRunner(SystemClock(), kill_grace=300)
    request = make_request(CommandAction(shell="trap '' TERM; echo ready; sleep 300"))
    running = runner.start(request, lambda _r: None)
    try:
        # Once the trap is set (a SIGTERM before it would end the job at once).
        wait_until(lambda: request.log_path.exists() and "ready" in request.log_path.read_text())
        running.stop("stopped: by the test")
        assert running.wait(0) is None
        # The stop's SIGTERM goes out on the supervisor's thread, in order: once a call posted
        # after it has run, the run is being stopped (a SIGKILL before that is someone else's).
        handled = threading.Event()
        supervisor().call_soon(handled.set)
        assert handled.wait(60)
    finally:
        if running.pid is not None:
            os.killpg(running.pid, signal.SIGKILL)
    result = running.wait(60)
    assert result is not None
    assert (result.status, result.reason) == (RunStatus.interrupted, "stopped: by the test")


class TickingClock:
    """Each reading of the wall clock is one second after the previous one."""

    def __init__(self) -> None:
        self.current = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)

    def now(self) -> datetime:
        self.current += timedelta(seconds=1)
        return self.current

    def monotonic(self) -> float:
        return time.monotonic()


def test_recorded_times_come_from_the_injected_clock(make_request: MakeRequest) -> None:
    result = ActionRunner(TickingClock()).run(make_request(CommandAction(argv=("true",))))
    assert result.started_at.tzinfo is UTC
    assert datetime(2026, 3, 1, 9, 0, tzinfo=UTC) < result.started_at < result.finished_at
    assert result.finished_at - result.started_at <= timedelta(seconds=2)


def test_a_request_repr_names_its_secrets_but_hides_their_values(
    make_request: MakeRequest,
) -> None:
    request = make_request(CommandAction(argv=("true",)), secrets={"API_TOKEN": "tok-abcdef"})
    assert "API_TOKEN" in repr(request)
    assert "tok-abcdef" not in repr(request)


def test_a_callback_that_raises_still_ends_the_run_and_is_logged(
    runner: ActionRunner, make_request: MakeRequest, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(_result: ActionResult) -> None:
        raise RuntimeError("a bug in the caller")

    result = runner.start(make_request(CommandAction(argv=("true",))), broken).wait(10)
    assert result is not None
    assert result.status is RunStatus.succeeded
    assert "run 1: on_finished failed" in caplog.text
    assert "RuntimeError: a bug in the caller" in caplog.text
    # The thread that looks after every job lived through it.
    after = runner.run(make_request(CommandAction(shell="echo still here"), run_id=2))
    assert (after.status, after.output_tail) == (RunStatus.succeeded, "still here\n")


def test_a_request_handed_over_before_a_freeze_is_not_started_past_its_start_by(
    runner: ActionRunner, tmp_path: Path
) -> None:
    """The app froze between handing the run over and the supervisor starting it: by then the
    run's lease may have lapsed and another machine may be running it, so no process starts."""
    clock = TickingClock()
    late = ActionRunner(clock)
    frozen, thawed = threading.Event(), threading.Event()

    def freeze() -> None:
        frozen.set()
        thawed.wait(30)

    supervisor().call_soon(freeze)  # the supervisor stands still, as in a SIGSTOP
    assert frozen.wait(10)
    marker = tmp_path / "ran"
    request = ActionRequest(
        CommandAction(argv=("touch", str(marker))), 7, tmp_path / "7.log",
        start_by=clock.now() + timedelta(seconds=45),
    )  # fmt: skip
    pids: list[int] = []
    running = late.start(request, lambda _result: None, on_started=pids.append)
    clock.current += timedelta(seconds=46)
    thawed.set()
    result = running.wait(10)
    assert result is not None
    assert (result.status, result.reason, result.exit_code, result.too_late) == (
        RunStatus.interrupted, NOT_STARTED_LATE, None, True,
    )  # fmt: skip
    assert pids == []
    assert not marker.exists()
    assert not request.log_path.exists()  # the run's next start writes its log
    # In time, the same request starts.
    on_time = runner.run(dataclasses.replace(request, start_by=datetime.now(UTC) + timedelta(1)))
    assert on_time.status is RunStatus.succeeded
    assert marker.exists()
