"""The App Nap activity at its pyobjc boundary (faked, on any OS)."""

from __future__ import annotations

from domi_desktop.platform.appnap import (
    ACTIVITY_OPTIONS,
    REASON,
    Activity,
    AppNapActivity,
    ProcessInfo,
)


class FakeProcessInfo:
    def __init__(self) -> None:
        self.active: list[tuple[int, str]] = []
        self.ended = 0

    def beginActivityWithOptions_reason_(self, options: int, reason: str, /) -> Activity:
        self.active.append((options, reason))
        return object()

    def endActivity_(self, activity: Activity, /) -> None:
        self.active.pop()
        self.ended += 1


def test_one_activity_without_app_nap_but_with_idle_sleep_is_held_until_stop() -> None:
    info = FakeProcessInfo()
    activity = AppNapActivity(platform="darwin", process_info=lambda: info)
    assert activity.start()
    assert activity.start()  # a second start replaces, never stacks
    assert info.active == [(0x00EFFFFF, REASON)]
    assert ACTIVITY_OPTIONS == 0x00EFFFFF  # NSActivityUserInitiatedAllowingIdleSystemSleep
    assert activity.status == "an NSProcessInfo activity keeps App Nap off"
    activity.stop()
    activity.stop()
    assert info.active == [] and info.ended == 2


def test_elsewhere_and_without_pyobjc_it_says_why() -> None:
    linux = AppNapActivity(platform="linux")
    assert not linux.start()
    assert linux.status == "App Nap exists only on macOS, not on linux"

    def missing() -> ProcessInfo:
        raise ImportError("No module named 'Foundation'")

    bare = AppNapActivity(platform="darwin", process_info=missing)
    assert not bare.start()
    assert bare.status.startswith("pyobjc (Foundation) is not installed")
