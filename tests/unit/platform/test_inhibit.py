"""The macOS and Windows sleep inhibitors against fakes of the ctypes libraries they load."""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any

import pytest

from domi_desktop.platform.inhibit import sleep_inhibitor_for_platform
from domi_desktop.platform.inhibit.base import NoInhibition, UnsupportedSleepInhibitor
from domi_desktop.platform.inhibit.macos import (
    ASSERTION_LEVEL_ON,
    CORE_FOUNDATION,
    FRAMEWORKS,
    IOKIT,
    AssertionSleepInhibitor,
)
from domi_desktop.platform.inhibit.windows import (
    ES_CONTINUOUS,
    ES_SYSTEM_REQUIRED,
    ExecutionStateInhibitor,
    load_kernel32,
)


class FakeFunction:
    """A foreign function: records its calls; ctypes' restype/argtypes are plain attributes."""

    def __init__(self, behaviour: Callable[..., Any]) -> None:
        self.behaviour = behaviour
        self.calls: list[tuple[Any, ...]] = []
        self.restype: Any = None
        self.argtypes: Any = None

    def __call__(self, *args: Any) -> Any:
        self.calls.append(args)
        return self.behaviour(*args)


class FakeLibrary:
    def __init__(self, **functions: Callable[..., Any]) -> None:
        self.functions = {name: FakeFunction(f) for name, f in functions.items()}

    def __getattr__(self, name: str) -> FakeFunction:
        try:
            return self.functions[name]
        except KeyError:
            raise AttributeError(name) from None


# -- macOS ----------------------------------------------------------------------------------------


class FakeMac:
    """IOKit's assertions and CoreFoundation's strings, with the live ones counted."""

    def __init__(self, create_result: int = 0) -> None:
        self.strings: dict[int, bytes] = {}
        self.assertions: dict[int, bytes] = {}
        self.create_result = create_result
        self.cf = FakeLibrary(CFStringCreateWithCString=self.create_string, CFRelease=self.release)
        self.iokit = FakeLibrary(
            IOPMAssertionCreateWithName=self.create_assertion,
            IOPMAssertionRelease=self.release_assertion,
        )
        self.loaded: list[str] = []

    def load(self, path: str) -> FakeLibrary:
        self.loaded.append(path)
        return {IOKIT: self.iokit, CORE_FOUNDATION: self.cf}[path]

    def create_string(self, allocator: None, text: bytes, encoding: int) -> int:
        ref = 0x1000 + len(self.strings) + 1
        self.strings[ref] = text
        return ref

    def release(self, ref: int) -> None:
        del self.strings[ref]

    def create_assertion(self, kind: int, level: int, name: int, out: Any) -> int:
        assert level == ASSERTION_LEVEL_ON
        assert self.strings[kind] == b"PreventUserIdleSystemSleep"
        if self.create_result:
            return self.create_result
        out.contents.value = 500 + len(self.assertions)
        self.assertions[out.contents.value] = self.strings[name]
        return 0

    def release_assertion(self, assertion_id: int) -> int:
        del self.assertions[assertion_id]
        return 0


def test_macos_holds_one_assertion_per_handle_until_released() -> None:
    mac = FakeMac()
    inhibitor = AssertionSleepInhibitor(load=mac.load)
    first = inhibitor.acquire("Backup is running")
    second = inhibitor.acquire("Sync is running")
    assert sorted(mac.assertions.values()) == [
        b"domi-desktop: Backup is running",
        b"domi-desktop: Sync is running",
    ]
    assert mac.strings == {}  # every CFString made for the call was released
    assert mac.loaded == [IOKIT, CORE_FOUNDATION]  # loaded once
    first.release()
    first.release()
    assert list(mac.assertions.values()) == [b"domi-desktop: Sync is running"]
    second.release()
    assert mac.assertions == {}
    assert inhibitor.status == "a power assertion keeps the machine awake (Sync is running)"
    assert FRAMEWORKS[IOKIT]["IOPMAssertionRelease"] == ((ctypes.c_uint32,), ctypes.c_int32)


def test_macos_refusal_is_a_status_and_an_empty_handle() -> None:
    mac = FakeMac(create_result=-536870201)  # kIOReturnBadArgument as a signed kern_return_t
    inhibitor = AssertionSleepInhibitor(load=mac.load)
    handle = inhibitor.acquire("Backup is running")
    assert isinstance(handle, NoInhibition)
    assert inhibitor.status == "IOPMAssertionCreateWithName failed: 0xe00002c7"
    assert mac.strings == {}


def test_macos_without_iokit_is_a_status() -> None:
    def missing(path: str) -> Any:
        raise OSError(f"dlopen({path}): image not found")

    inhibitor = AssertionSleepInhibitor(load=missing)
    assert isinstance(inhibitor.acquire("Backup"), NoInhibition)
    assert inhibitor.status.startswith("cannot load IOKit: dlopen(")


# -- Windows --------------------------------------------------------------------------------------


class FakeKernel32:
    def __init__(self, fail: bool = False) -> None:
        self.state = ES_CONTINUOUS
        self.fail = fail
        self.library = FakeLibrary(SetThreadExecutionState=self.set_state)

    def set_state(self, flags: int) -> int:
        if self.fail:
            return 0
        previous, self.state = self.state, flags
        return previous


def test_windows_keeps_the_system_required_while_any_handle_is_held() -> None:
    kernel = FakeKernel32()
    inhibitor = ExecutionStateInhibitor(load=lambda: kernel.library)
    first = inhibitor.acquire("Backup is running")
    assert kernel.state == ES_CONTINUOUS | ES_SYSTEM_REQUIRED
    second = inhibitor.acquire("Sync is running")
    first.release()
    first.release()
    assert kernel.state == ES_CONTINUOUS | ES_SYSTEM_REQUIRED
    second.release()
    assert kernel.state == ES_CONTINUOUS
    assert kernel.library.SetThreadExecutionState.calls == [
        (ES_CONTINUOUS | ES_SYSTEM_REQUIRED,),
        (ES_CONTINUOUS,),
    ]
    again = inhibitor.acquire("Backup is running")
    assert kernel.state == ES_CONTINUOUS | ES_SYSTEM_REQUIRED
    again.release()
    assert kernel.state == ES_CONTINUOUS


def test_windows_refusal_is_a_status_and_an_empty_handle() -> None:
    kernel = FakeKernel32(fail=True)
    inhibitor = ExecutionStateInhibitor(load=lambda: kernel.library)
    assert isinstance(inhibitor.acquire("Backup"), NoInhibition)
    assert inhibitor.status == "SetThreadExecutionState refused to keep the system awake"


@pytest.mark.posix_only  # kernel32 loads on Windows
def test_windows_inhibitor_elsewhere_is_a_status() -> None:
    inhibitor = ExecutionStateInhibitor()
    assert isinstance(inhibitor.acquire("Backup"), NoInhibition)
    assert inhibitor.status.startswith("cannot load kernel32: kernel32 exists on Windows only")
    with pytest.raises(OSError):
        load_kernel32()


@pytest.mark.parametrize(
    ("platform", "kind"),
    [
        ("win32", ExecutionStateInhibitor),
        ("darwin", AssertionSleepInhibitor),
        ("freebsd14", UnsupportedSleepInhibitor),
    ],
)
def test_each_platform_gets_its_inhibitor(platform: str, kind: type) -> None:
    inhibitor = sleep_inhibitor_for_platform(platform)
    assert isinstance(inhibitor, kind)
    if isinstance(inhibitor, UnsupportedSleepInhibitor):
        assert isinstance(inhibitor.acquire("x"), NoInhibition)
        assert inhibitor.status == "cannot keep freebsd14 awake: no sleep inhibitor for this OS"
