"""The network condition source following the fake NetworkManager through Qt.

QNetworkInformation is one per process and binds the system bus once, so it runs in a child:
`python -m domi_desktop.platform.conditions`, which prints the state at each change.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import pytest

from tests.desktop.harness import Child, FakeNetworkManager

pytestmark = pytest.mark.gui

LATENCY = 2.0


def test_it_reports_the_network_and_each_change_within_two_seconds(
    fake_networkmanager: FakeNetworkManager, spawn: Callable[..., Child]
) -> None:
    nm = fake_networkmanager
    child = spawn(
        [sys.executable, "-m", "domi_desktop.platform.conditions", "--backend", "networkmanager"]
    )
    (started,) = child.wait_for_event("started", timeout=60)
    assert (started["network"], started["metered"], started["on_ac"]) == ("online", False, True)
    assert "Qt's networkmanager backend" in started["status"]

    steps: list[tuple[Callable[[], float], dict[str, Any]]] = [
        (nm.go_offline, {"network": "offline"}),
        (lambda: nm.update(state=70, connectivity=4, primary="wifi"), {"network": "online"}),
        (lambda: nm.update(connectivity=2), {"network": "portal"}),
        (lambda: nm.update(connectivity=4, metered=1), {"network": "online", "metered": True}),
        (lambda: nm.update(state=60, connectivity=3), {"network": "limited"}),
    ]
    latencies = []
    for change, wanted in steps:
        before = [
            e
            for e in child.events()
            if e["event"] == "changed" and all(e[k] == v for k, v in wanted.items())
        ]
        sent = change()
        found = child.wait_for_event("changed", count=len(before) + 1, timeout=LATENCY, **wanted)
        latencies.append(found[-1]["t"] - sent)
    print("NM change -> condition change:", [f"{v * 1000:.0f} ms" for v in latencies])
    assert all(0 <= v <= LATENCY for v in latencies), latencies


def test_without_networkmanager_the_network_is_unknown_and_not_held_against_jobs(
    system_bus: str, spawn: Callable[..., Child]
) -> None:
    child = spawn(
        [sys.executable, "-m", "domi_desktop.platform.conditions", "--backend", "networkmanager"]
    )
    (started,) = child.wait_for_event("started", timeout=60)
    assert (started["network"], started["metered"]) == ("unknown", None), started
    assert started["status"].startswith(
        "no network information: cannot load networkmanager backend (available: "
    )
