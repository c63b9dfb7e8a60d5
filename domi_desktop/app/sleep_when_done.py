"""Wiring of ``runtime.sleep_when_done`` to a running host: made when first asked for, on the
engine's thread, with the host's wake tools (made then too: finding them asks the OS)."""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

from domi_desktop.runtime.sleep_when_done import SleepWhenDone

if TYPE_CHECKING:
    from domi_desktop.app.host import Host

_made: weakref.WeakKeyDictionary[Host, SleepWhenDone] = weakref.WeakKeyDictionary()


def sleep_when_done_of(host: Host) -> SleepWhenDone:
    """The host's one ``SleepWhenDone``; on the engine's thread."""
    found = _made.get(host)
    if found is None:
        runtime = host.runtime
        found = SleepWhenDone(
            runtime.running_runs,
            lambda: host.waking.tools,
            runtime.clock.now,
            host.loop.call_soon,
        )
        runtime.subscribe(found.observe)
        _made[host] = found
    return found
