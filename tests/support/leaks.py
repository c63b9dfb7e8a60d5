"""Nothing left behind: a test that leaves a thread or a child process running fails, by name.

Every production thread is a daemon, so a forgotten ``stop()`` would otherwise leak silently and
the next test would run beside it. Before each test's setup the plugin notes the threads
(``threading.enumerate()``) and the direct child processes (psutil) alive; after its teardown
anything new still running, after a short grace for what is ending, makes the teardown an error
that names the test and what it left. What it left is then killed (a process) or remembered (a
thread, which cannot be killed) so the next test is not blamed for it.

What a fixture of a wider scope (module, session) starts belongs to it, not to the test that
happened to set it up: that is judged when the fixture has been finalized, still in the name of
the test that started it.

Loaded by ``tests/conftest.py`` (``pytest_plugins``), so every directory of tests has it.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Generator
from dataclasses import dataclass, field

import psutil
import pytest

GRACE = 5.0
"""Real seconds a thread or a process that is ending (its owner asked it to stop, it is on its
way out) may take after teardown: a safety net on a loaded machine, never a measurement."""

ALLOWED_THREAD_PREFIXES = (
    # Threads the interpreter did not start but that called into Python (Qt's own threads, a
    # D-Bus library's): Python registers them as "Dummy-N" and never forgets them, and they are
    # owned by the library that made them, which the test cannot stop.
    "Dummy-",
    # pytest-timeout's watchdog, when a run asks for it: pytest's, started and ended by it.
    "pytest_timeout",
)
"""Threads no test owns, by name."""

PROCESS_THREADS = ("domi-jobs", "domi-run-starter")
"""The app's two threads of which a process has one each, started when first needed and living
as long as the process by design (``actions/supervisor.py``: a job asks for SIGTERM when the
thread that started it ends, so that thread must outlive every job): the first test to run a job
starts them, and no test leaves them behind."""


@dataclass(frozen=True)
class Child:
    pid: int
    create_time: float
    """With the pid, tells a process from a later one that got its pid."""
    describe: str


CHILDREN_LISTED = os.path.exists(f"/proc/self/task/{os.getpid()}/children")
"""Linux lists each thread's children (CONFIG_PROC_CHILDREN): a fraction of a millisecond, where
psutil reads every process's parent (about 15 ms on a loaded machine, twice a test)."""


def _child_pids() -> list[int]:
    pids = []
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/children", encoding="ascii") as listed:
                pids += [int(pid) for pid in listed.read().split()]
        except FileNotFoundError:
            continue  # the thread ended meanwhile: its children went to another of ours
    return pids


def _children() -> dict[tuple[int, float], Child]:
    found = {}
    try:
        if CHILDREN_LISTED:
            processes = []
            for pid in _child_pids():
                with contextlib.suppress(psutil.NoSuchProcess):  # ended and reaped meanwhile
                    processes.append(psutil.Process(pid))
        else:
            processes = psutil.Process(os.getpid()).children(recursive=False)
    except (psutil.Error, OSError):
        return {}  # a platform that will not list them (Wine may not): threads are still checked
    for process in processes:
        try:
            if process.status() == psutil.STATUS_ZOMBIE:
                continue  # ended: only not reaped yet, which the next Popen does
            key = (process.pid, process.create_time())
        except (psutil.Error, OSError):
            continue  # ended while we looked
        try:
            command = " ".join(process.cmdline())[:160]
        except (psutil.Error, OSError):  # ended meanwhile, or Wine will not say (WinError 87)
            command = "(its command line unknown)"
        found[key] = Child(process.pid, key[1], f"pid {process.pid}: {command}")
    return found


def _threads() -> set[threading.Thread]:
    return {
        thread
        for thread in threading.enumerate()
        if thread.is_alive()
        and not thread.name.startswith(ALLOWED_THREAD_PREFIXES)
        and thread.name not in PROCESS_THREADS
    }


@dataclass
class Leftovers:
    test: str
    threads: set[threading.Thread]
    children: dict[tuple[int, float], Child]
    owners: set[str] = field(default_factory=set)
    """Wider-scoped fixtures set up by this test that may own what it left; empty: the test's."""

    def still_running(self, wait: float) -> None:
        """Keep only what still runs, waiting up to ``wait`` seconds for it to end."""
        deadline = time.monotonic() + wait
        while True:
            self.threads = {thread for thread in self.threads if thread.is_alive()}
            alive = _children()
            self.children = {key: c for key, c in self.children.items() if key in alive}
            if not (self.threads or self.children) or time.monotonic() >= deadline:
                return
            time.sleep(0.05)

    def complaint(self) -> str:
        lines = [f"{self.test} left running after its teardown:"]
        if self.owners:
            fixtures = ", ".join(sorted(name.rpartition("::")[2] for name in self.owners))
            lines = [f"{self.test} left running, after its fixtures {fixtures} ended:"]
        lines += [
            f"  thread {thread.name!r} ({type(thread).__name__}, daemon={thread.daemon})"
            for thread in sorted(self.threads, key=lambda t: t.name)
        ]
        lines += [f"  child process {child.describe}" for child in self.children.values()]
        return "\n".join(lines)

    def put_away(self) -> None:
        """Kill what the test left (its own children), so the next test runs alone."""
        for child in self.children.values():
            try:
                process = psutil.Process(child.pid)
                if process.create_time() == child.create_time:
                    process.kill()
                    process.wait(GRACE)
            except psutil.Error:
                pass


class LeakCheck:
    def __init__(self) -> None:
        self.known_threads: set[threading.Thread] = set()
        self.known_children: dict[tuple[int, float], Child] = {}
        self.wider: set[str] = set()
        """Wider-scoped fixtures set up during the current test's setup."""
        self.finalized: set[str] = set()
        self.carried: list[Leftovers] = []

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, None, None]:
        self.known_threads = _threads()
        self.known_children = _children()
        self.wider = set()
        return (yield)

    @pytest.hookimpl(wrapper=True)
    def pytest_fixture_setup(
        self, fixturedef: pytest.FixtureDef[object], request: pytest.FixtureRequest
    ) -> Generator[None, object, object]:
        # pytest's and its plugins' own (tmp_path_factory, qapp: no base id) start no thread or
        # process of the suite's; counting them would put off judging the first test using them.
        if fixturedef.scope != "function" and fixturedef.baseid:
            self.wider.add(f"{fixturedef.baseid}::{fixturedef.argname}")
        return (yield)

    def pytest_fixture_post_finalizer(
        self, fixturedef: pytest.FixtureDef[object], request: pytest.FixtureRequest
    ) -> None:
        if fixturedef.scope != "function":
            self.finalized.add(f"{fixturedef.baseid}::{fixturedef.argname}")

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_teardown(
        self, item: pytest.Item, nextitem: pytest.Item | None
    ) -> Generator[None, None, None]:
        try:
            result = yield
        except BaseException:
            self._judge(item, tell=False)  # the teardown's own error is the one to read
            raise
        self._judge(item)
        return result

    def _judge(self, item: pytest.Item, *, tell: bool = True) -> None:
        new = Leftovers(
            item.nodeid,
            _threads() - self.known_threads,
            {k: c for k, c in _children().items() if k not in self.known_children},
        )
        if self.wider and (new.threads or new.children):
            new.owners = set(self.wider)
            self.carried.append(new)
        elif new.threads or new.children:
            self._fail_if_still_running([new], tell)
        due = [left for left in self.carried if left.owners <= self.finalized]
        self.carried = [left for left in self.carried if left not in due]
        self._fail_if_still_running(due, tell)

    def _fail_if_still_running(self, leftovers: list[Leftovers], tell: bool) -> None:
        complaints = []
        for left in leftovers:
            left.still_running(GRACE)
            if left.threads or left.children:
                complaints.append(left.complaint())
                left.put_away()
                self.known_threads |= left.threads  # a thread cannot be killed: blamed once
        if complaints and tell:
            pytest.fail("\n".join(complaints), pytrace=False)


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(LeakCheck(), "domi-leak-check")
