"""The real headless app on Windows, driven as a user would: the CLI over the named pipe, a posted
resume, jobs under cmd.exe and a Job Object, and quit.

Run natively by the release workflow's Windows job and under Wine by ``make test-windows``, which is
5-20x slower than Windows: every wait is for an event, with a deadline that only a hang reaches.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import psutil
import pytest

pytestmark = pytest.mark.windows_only

START_TIMEOUT = 180.0
CLI_TIMEOUT = 180.0
STOP_TIMEOUT = 120.0
POOL_IDLE_TIME = 8.0
"""Longer than Wine's thread pool keeps an idle thread (5 s)."""
SEND_TIMEOUT = 60.0

WM_POWERBROADCAST = 0x0218
PBT_APMRESUMEAUTOMATIC = 0x12
POWER_WINDOW_TITLE = "domi-desktop power"


def wait_until(condition: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout:g} s: {what}")
        time.sleep(0.25)


@dataclass
class App:
    process: subprocess.Popen[bytes]
    env: dict[str, str]
    log: Path

    def cli(self, *args: str, timeout: float = CLI_TIMEOUT) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "domi_desktop", *args],
            env=self.env, capture_output=True, text=True, timeout=timeout,
        )  # fmt: skip

    def json(self, *args: str, timeout: float = CLI_TIMEOUT) -> Any:
        # Before a "--": what follows it is the job's command.
        split = args.index("--") if "--" in args else len(args)
        done = self.cli(*args[:split], "--json", *args[split:], timeout=timeout)
        assert done.returncode == 0, f"{args}: exit {done.returncode}\n{done.stderr}"
        return json.loads(done.stdout)

    def run_now(self, schedule: int) -> dict[str, Any]:
        """The run's record; run-now exits 1 when the run did not succeed, 0 when it did."""
        done = self.cli("run-now", str(schedule), "--json")
        assert done.returncode in (0, 1), f"run-now: exit {done.returncode}\n{done.stderr}"
        run: dict[str, Any] = json.loads(done.stdout)
        assert done.returncode == (0 if run["status"] == "succeeded" else 1)
        return run

    def status(self) -> dict[str, Any] | None:
        done = self.cli("status", "--json")
        return json.loads(done.stdout) if done.returncode == 0 else None


@pytest.fixture
def app(tmp_path: Path) -> Iterator[App]:
    data = tmp_path / "data"
    data.mkdir()
    env = {**os.environ, "DOMI_DATA_DIR": str(data)}
    log = tmp_path / "app.stderr"
    with log.open("wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "domi_desktop", "--headless"],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr,
        )  # fmt: skip
    app = App(process, env, log)
    try:
        yield app
    finally:
        if process.poll() is None:
            with suppress(subprocess.TimeoutExpired):
                app.cli("quit", timeout=STOP_TIMEOUT)
            with suppress(subprocess.TimeoutExpired):
                process.wait(timeout=STOP_TIMEOUT)
        if process.poll() is None:
            process.kill()
            process.wait(timeout=STOP_TIMEOUT)
        print(log.read_text(errors="replace"))


def running(app: App) -> dict[str, Any]:
    def up() -> dict[str, Any] | None:
        assert app.process.poll() is None, f"the app exited with {app.process.returncode}"
        return app.status()

    state: dict[str, Any] = wait_until(up, START_TIMEOUT, "status finds the app over its pipe")
    return state


def windows_of(pid: int, title: str) -> list[int]:
    """The top-level windows of process ``pid`` with this title, hidden ones included."""
    from ctypes import wintypes

    user32 = ctypes.WinDLL("user32", use_last_error=True)
    enum_proc = ctypes.WINFUNCTYPE(wintypes.BOOL, wintypes.HWND, wintypes.LPARAM)
    user32.EnumWindows.argtypes = (enum_proc, wintypes.LPARAM)
    user32.EnumWindows.restype = wintypes.BOOL
    user32.GetWindowThreadProcessId.argtypes = (wintypes.HWND, ctypes.POINTER(wintypes.DWORD))
    user32.GetWindowThreadProcessId.restype = wintypes.DWORD
    user32.GetWindowTextW.argtypes = (wintypes.HWND, wintypes.LPWSTR, ctypes.c_int)
    user32.GetWindowTextW.restype = ctypes.c_int
    found: list[int] = []

    def visit(hwnd: int, _param: int) -> bool:
        owner = wintypes.DWORD()
        user32.GetWindowThreadProcessId(hwnd, ctypes.byref(owner))
        if owner.value == pid:
            text = ctypes.create_unicode_buffer(256)
            user32.GetWindowTextW(hwnd, text, len(text))
            if text.value == title:
                found.append(hwnd)
        return True

    user32.EnumWindows(enum_proc(visit), 0)
    return found


def post_message(hwnd: int, message: int, wparam: int, lparam: int) -> None:
    from ctypes import wintypes

    user32 = ctypes.WinDLL("user32", use_last_error=True)
    user32.PostMessageW.argtypes = (wintypes.HWND, wintypes.UINT, wintypes.WPARAM, wintypes.LPARAM)
    user32.PostMessageW.restype = wintypes.BOOL
    assert user32.PostMessageW(hwnd, message, wparam, lparam), ctypes.get_last_error()


def add_schedule(app: App, name: str, *args: str) -> int:
    # A schedule that never comes due on its own during the test: only run-now runs it.
    schedule = app.json("schedule", "add", name, "--cron", "0 0 1 1 *", *args)
    return int(schedule["id"])


def test_the_cli_finds_the_app_over_its_named_pipe_and_quit_stops_it_with_exit_0(app: App) -> None:
    state = running(app)
    assert state["pid"] == app.process.pid
    assert state["socket"].startswith("\\\\.\\pipe\\")
    done = app.cli("quit")
    assert done.returncode == 0, done.stderr
    assert app.process.wait(timeout=STOP_TIMEOUT) == 0
    assert app.cli("status").returncode != 0  # nobody answers any more


def test_a_posted_power_broadcast_is_a_resume_wake(app: App) -> None:
    running(app)
    windows = wait_until(
        lambda: windows_of(app.process.pid, POWER_WINDOW_TITLE), START_TIMEOUT, "the power window"
    )
    # To each, as Windows broadcasts it to every top-level window: the scheduler's is one of
    # several (the monitors and the session triggers listen for sleep and resume too).
    for hwnd in windows:
        post_message(hwnd, WM_POWERBROADCAST, PBT_APMRESUMEAUTOMATIC, 0)

    def resumed() -> bool:
        state = app.status()
        return bool(state and (state["last_wake"] or {}).get("reason") == "resume")

    wait_until(resumed, CLI_TIMEOUT, "status --json shows last_wake.reason == 'resume'")


def test_run_now_runs_a_cmd_job_and_records_its_output(app: App) -> None:
    running(app)
    schedule = add_schedule(app, "echo", "--shell", "--", "echo hello from cmd")
    run = app.run_now(schedule)
    assert run["status"] == "succeeded", run
    assert run["exit_code"] == 0
    assert "hello from cmd" in run["output_tail"]
    (recorded,) = app.json("runs", "--limit", "5")
    assert recorded["id"] == run["id"] and "hello from cmd" in recorded["output_tail"]


GRANDPARENT = """\
import subprocess, sys, time
from pathlib import Path
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
Path(sys.argv[1]).write_text(str(child.pid))
print("grandchild", child.pid, flush=True)
time.sleep(600)
"""


def test_a_timeout_ends_the_job_and_the_process_it_started(app: App, tmp_path: Path) -> None:
    running(app)
    script, pid_file = tmp_path / "grandparent.py", tmp_path / "grandchild.pid"
    script.write_text(GRANDPARENT)
    schedule = add_schedule(
        app, "sleeper", "--timeout", "20", "--", sys.executable, str(script), str(pid_file)
    )
    run = app.run_now(schedule)
    assert run["status"] == "timed_out", run
    grandchild = int(pid_file.read_text())
    # The Job Object ends it: the job's own process never waited for it or passed anything on.
    wait_until(lambda: not psutil.pid_exists(grandchild), STOP_TIMEOUT, "the grandchild ended")


def read_answers(transport: Any, count: int) -> list[dict[str, Any]]:
    received = b""
    deadline = time.monotonic() + CLI_TIMEOUT
    while received.count(b"\n") < count:
        assert time.monotonic() < deadline, f"not {count} answers within {CLI_TIMEOUT:g} s"
        chunk = transport.receive(1.0)
        assert chunk != b"", "the app closed the pipe"
        received += chunk or b""
    return [json.loads(line) for line in received.splitlines()]


def test_each_whole_line_of_a_write_is_answered_and_a_cut_one_waits_for_its_newline(
    app: App,
) -> None:
    """The named pipe's twin of the socket's half-closed client: a pipe cannot be half-closed,
    so the last line's end is its newline, sent later."""
    import msvcrt

    from domi_desktop.frontdoor.rpc.client import PipeTransport, _kernel32_peek

    state = running(app)
    with open(state["socket"], "r+b", buffering=0) as pipe:
        transport = PipeTransport(pipe, msvcrt.get_osfhandle(pipe.fileno()), _kernel32_peek())
        transport.send(
            b'{"jsonrpc":"2.0","id":1,"method":"schedule.list"}\n'
            b'{"jsonrpc":"2.0","id":2,"method":"app.status"}'
        )
        (first,) = read_answers(transport, 1)
        assert first["id"] == 1 and "result" in first
        transport.send(b"\n")
        (second,) = read_answers(transport, 1)
        assert second["id"] == 2 and second["result"]["pid"] == app.process.pid


def test_clients_idle_past_the_thread_pools_idle_time_are_still_answered(app: App) -> None:
    """Qt's pipe reader started each next read on a thread-pool thread; Wine retires a pool
    thread idle for 5 s (once the pool has grown) and cancels the reads it started, so a client
    waiting longer for an answer (``run-now`` of a long job, ``events``) lost its connection
    ('Unknown error 995'). Answers arriving together grow the pool; then every client idles."""
    import msvcrt

    from domi_desktop.frontdoor.rpc.client import PipeTransport, _kernel32_peek

    state = running(app)
    pipes = [open(state["socket"], "r+b", buffering=0) for _ in range(12)]  # noqa: SIM115
    stuck = False
    try:
        peek = _kernel32_peek()
        clients = [PipeTransport(p, msvcrt.get_osfhandle(p.fileno()), peek) for p in pipes]
        for round_id in (1, 2, 3):
            for client in clients:
                # A write the app no longer reads blocks for ever: in a thread, so the test
                # fails instead of hanging.
                request = b'{"jsonrpc":"2.0","id":%d,"method":"app.status"}\n' % round_id
                sender = threading.Thread(target=client.send, args=(request,), daemon=True)
                sender.start()
                sender.join(SEND_TIMEOUT)
                stuck = sender.is_alive()
                assert not stuck, f"round {round_id}: the app no longer reads a client"
            for client in clients:
                (answer,) = read_answers(client, 1)
                assert answer["id"] == round_id and "result" in answer, answer
            time.sleep(POOL_IDLE_TIME)  # the condition under test: no byte either way
    finally:
        if stuck:  # closing a pipe waits for its blocked write; a dead app ends that write
            app.process.kill()
            app.process.wait(STOP_TIMEOUT)
        for pipe in pipes:
            pipe.close()


def test_a_flood_of_idle_pipe_clients_never_loses_the_listener(app: App) -> None:
    """The named pipe's twin of the socket flood: more idle clients than the app keeps
    (MAX_CONNECTIONS, 64); it drops the oldest and still answers."""
    state = running(app)
    idle: list[BinaryIO] = []
    deadline = time.monotonic() + START_TIMEOUT
    try:
        while len(idle) < 100:
            assert time.monotonic() < deadline, f"only {len(idle)} clients got a pipe"
            try:
                idle.append(open(state["socket"], "r+b", buffering=0))  # noqa: SIM115
            except OSError:
                # Every instance is taken (ERROR_PIPE_BUSY, which open() reports as EINVAL): the
                # app makes the next one as it accepts; the deadline above ends a real refusal.
                time.sleep(0.05)
        wait_until(app.status, CLI_TIMEOUT, "status while the idle clients hold their pipes")
    finally:
        for client in idle:
            client.close()
    log = Path(app.env["DOMI_DATA_DIR"]) / "domi-desktop.log"
    assert "dropping the oldest idle ones" in log.read_text(errors="replace")
    assert app.process.poll() is None


def test_a_wake_to_run_schedule_arms_the_apps_waitable_timer_and_disabling_it_cancels(
    app: App,
) -> None:
    """The app's own alarm (tests/windows/test_wake_on_windows.py sees such a timer fire)."""
    running(app)
    schedule = app.json("schedule", "add", "nightly", "--cron", "0 3 * * *", "--wake", "--",
                        "cmd", "/c", "echo")  # fmt: skip

    def wake() -> dict[str, Any]:
        state = app.status() or {}
        shown: dict[str, Any] = state.get("wake") or {}
        return shown

    armed = wait_until(lambda: wake().get("at") and wake(), CLI_TIMEOUT, "the wake armed")
    assert armed["schedules"] == [schedule["id"]]
    assert armed["alarm"].startswith("the machine wakes at ")
    assert armed["alarm"].endswith("(a Windows waitable timer)")

    app.json("schedule", "disable", str(schedule["id"]))
    wait_until(lambda: wake().get("at") is None, CLI_TIMEOUT, "the wake cancelled")
    assert wake()["alarm"] == "not armed"


WM_WTSSESSION_CHANGE = 0x02B1
WTS_SESSION_LOCK = 0x7
WTS_SESSION_UNLOCK = 0x8
SESSION_WINDOW_TITLE = "domi-desktop session"


def test_an_unlock_posted_to_the_apps_session_window_runs_the_at_unlock_schedule_once(
    app: App,
) -> None:
    """The unlock trigger, Windows' half: the app's own hidden window, found as another
    program would find it, given what Windows sends it; at most once per --min-interval."""
    running(app)
    schedule = add_schedule(app, "at unlock", "--at-unlock", "--min-interval", "3600", "--shell",
                            "--", "echo unlocked")  # fmt: skip
    (hwnd,) = wait_until(
        lambda: windows_of(app.process.pid, SESSION_WINDOW_TITLE), START_TIMEOUT, "its window"
    )

    def runs() -> list[dict[str, Any]]:
        shown: list[dict[str, Any]] = app.json("runs", "--schedule", str(schedule), "--limit", "5")
        return shown

    post_message(hwnd, WM_WTSSESSION_CHANGE, WTS_SESSION_LOCK, 1)
    post_message(hwnd, WM_WTSSESSION_CHANGE, WTS_SESSION_UNLOCK, 1)
    (run,) = wait_until(
        lambda: [r for r in runs() if r["status"] == "succeeded"], CLI_TIMEOUT, "the unlock's run"
    )
    assert run["trigger"] == "unlock" and "unlocked" in run["output_tail"]
    # A second unlock within the hour: nothing more. Told apart from a slow one by a resume
    # posted after it, which the app handles only once it has handled the unlock.
    post_message(hwnd, WM_WTSSESSION_CHANGE, WTS_SESSION_UNLOCK, 1)
    for power in windows_of(app.process.pid, POWER_WINDOW_TITLE):
        post_message(power, WM_POWERBROADCAST, PBT_APMRESUMEAUTOMATIC, 0)
    wait_until(
        lambda: ((app.status() or {}).get("last_wake") or {}).get("reason") == "resume",
        CLI_TIMEOUT,
        "the resume after the second unlock",
    )
    assert [r["id"] for r in runs()] == [run["id"]]
