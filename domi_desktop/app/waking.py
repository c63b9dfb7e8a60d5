"""Wake to run, wired into a running instance: the keeper follows the driver's wakes (the host's
``woke`` signal) and the runtime's events, with this OS's alarm, input watch and sleeper."""

from __future__ import annotations

from PySide6.QtCore import SignalInstance

from domi_desktop.platform.wake import wake_tools_for_platform
from domi_desktop.ports import SleepInhibitor
from domi_desktop.runtime.engine import Runtime
from domi_desktop.runtime.waking import WakeKeeper


def start_waking(runtime: Runtime, inhibitor: SleepInhibitor, woke: SignalInstance) -> WakeKeeper:
    """The keeper of ``runtime``'s wake alarm, told of each driver wake by ``woke`` (the host's
    signal): given the pieces, not the host, which starts it."""
    keeper = WakeKeeper(
        runtime,
        wake_tools_for_platform,
        state=runtime.keeper.state,
        paused=lambda: runtime.driver.paused,
        notes=runtime.keeper,
        last_wake=lambda: runtime.driver.last_wake,
        inhibitor=inhibitor,
    )
    runtime.subscribe(keeper.observe)
    woke.connect(keeper.woke)
    return keeper
