from __future__ import annotations

import importlib.util
import os
import signal
import sys
import types
from collections.abc import Callable
from typing import Any

import pytest

from domi_desktop.platform.resume.macos import (
    DID_WAKE,
    TEST_WAKE_SIGNAL,
    WILL_SLEEP,
    WorkspaceWakeResumeSource,
)
from tests.support.fakes import wait_for


class FakeNotification:
    def __init__(self, name: str) -> None:
        self._name = name

    def name(self) -> str:
        return self._name


class FakeNotificationCenter:
    """What pyobjc's NSNotificationCenter does with block observers, recorded."""

    def __init__(self) -> None:
        self.observers: dict[object, tuple[str, object, Callable[[Any], None]]] = {}

    def addObserverForName_object_queue_usingBlock_(
        self, name: str, sender: object, queue: object, block: Callable[[Any], None]
    ) -> object:
        assert sender is None
        token = object()
        self.observers[token] = (name, queue, block)
        return token

    def removeObserver_(self, token: object) -> None:
        del self.observers[token]

    def post(self, name: str) -> None:
        for observed, _queue, block in list(self.observers.values()):
            if observed == name:
                block(FakeNotification(name))

    def postNotificationName_object_(self, name: str, sender: object) -> None:
        assert sender is None
        self.post(name)


@pytest.fixture
def center(monkeypatch: pytest.MonkeyPatch) -> FakeNotificationCenter:
    """A stand-in ``AppKit`` module: the shared workspace's center and the main queue."""
    center = FakeNotificationCenter()
    main_queue = object()
    workspace = types.SimpleNamespace(notificationCenter=lambda: center)
    appkit = types.ModuleType("AppKit")
    appkit.NSWorkspace = types.SimpleNamespace(sharedWorkspace=lambda: workspace)  # type: ignore[attr-defined]
    appkit.NSOperationQueue = types.SimpleNamespace(mainQueue=lambda: main_queue)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "AppKit", appkit)
    return center


@pytest.mark.skipif(importlib.util.find_spec("AppKit") is not None, reason="pyobjc is installed")
def test_without_pyobjc_it_says_so_and_does_not_start() -> None:
    source = WorkspaceWakeResumeSource()
    assert source.start(lambda: None) is False
    assert source.status.startswith("pyobjc (AppKit) is not installed")
    source.stop()


def test_wake_and_sleep_notifications_reach_their_callbacks(center: FakeNotificationCenter) -> None:
    calls: list[str] = []
    source = WorkspaceWakeResumeSource()

    assert source.start(lambda: calls.append("resume"), lambda: calls.append("sleep"))
    center.post(WILL_SLEEP)
    center.post(DID_WAKE)
    center.post("NSWorkspaceScreensDidSleepNotification")

    assert calls == ["sleep", "resume"]
    assert sorted(name for name, _, _ in center.observers.values()) == [DID_WAKE, WILL_SLEEP]


def test_stop_removes_the_observers(center: FakeNotificationCenter) -> None:
    calls: list[str] = []
    source = WorkspaceWakeResumeSource()
    source.start(lambda: calls.append("resume"))
    source.start(lambda: calls.append("resume again"))  # a restart keeps one pair of observers
    assert len(center.observers) == 2

    source.stop()
    center.post(DID_WAKE)
    assert center.observers == {}
    assert calls == []


@pytest.mark.parametrize(
    ("name", "calls"),
    [(DID_WAKE, ["resume"]), (WILL_SLEEP, ["sleep"]), ("NSWorkspaceDidMountNotification", [])],
)
def test_dispatch_maps_a_notification_name_to_its_callback(
    center: FakeNotificationCenter, name: str, calls: list[str]
) -> None:
    made: list[str] = []
    source = WorkspaceWakeResumeSource()
    source.start(lambda: made.append("resume"), lambda: made.append("sleep"))
    source.dispatch(name)
    assert made == calls


def test_dispatch_before_start_tells_nobody() -> None:
    WorkspaceWakeResumeSource().dispatch(DID_WAKE)


@pytest.mark.posix_only
def test_with_the_smoke_tests_variable_sigusr1_posts_a_wake_through_the_center(
    center: FakeNotificationCenter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The release's smoke test drives the real observer this way: the wake is posted to the
    workspace's center inside the app, and reaches the callback through the observer's block."""
    monkeypatch.setenv(TEST_WAKE_SIGNAL, "1")
    before = signal.getsignal(signal.SIGUSR1)
    calls: list[str] = []
    source = WorkspaceWakeResumeSource()
    assert source.start(lambda: calls.append("resume"))
    try:
        assert "SIGUSR1" in source.status
        os.kill(os.getpid(), signal.SIGUSR1)
        wait_for(lambda: calls == ["resume"], 10, "the posted wake reported")
    finally:
        source.stop()
    assert signal.getsignal(signal.SIGUSR1) is before


@pytest.mark.posix_only
def test_without_the_variable_sigusr1_is_not_taken(
    center: FakeNotificationCenter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(TEST_WAKE_SIGNAL, raising=False)
    before = signal.getsignal(signal.SIGUSR1)
    source = WorkspaceWakeResumeSource()
    assert source.start(lambda: None)
    try:
        assert signal.getsignal(signal.SIGUSR1) is before
        assert "SIGUSR1" not in source.status
    finally:
        source.stop()
