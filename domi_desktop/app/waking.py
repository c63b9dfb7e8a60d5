"""Wake to run, wired into a running instance: the keeper follows the driver's wakes (the host's
``woke`` signal) and the runtime's events, with this OS's alarm, input watch and sleeper."""

from __future__ import annotations

from typing import TYPE_CHECKING

from domi_desktop.platform.wake import wake_tools_for_platform
from domi_desktop.runtime.waking import WakeKeeper

if TYPE_CHECKING:
    from domi_desktop.app.host import Host


def start_waking(host: Host) -> WakeKeeper:
    runtime = host.runtime
    keeper = WakeKeeper(
        runtime,
        wake_tools_for_platform,
        state=runtime.keeper.state,
        paused=lambda: runtime.driver.paused,
        notes=runtime.keeper,
        last_wake=lambda: runtime.driver.last_wake,
        inhibitor=host.inhibitor,
    )
    runtime.subscribe(keeper.observe)
    host.woke.connect(keeper.woke)
    return keeper
