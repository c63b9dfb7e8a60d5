"""The WLAN API called for real: wlanapi.dll opened, its interfaces listed and asked for their
connection, and every allocation given back."""

from __future__ import annotations

import pytest

from domi_desktop.platform.conditions.winwlan import WlanNames

pytestmark = pytest.mark.windows_only


def test_the_wlan_api_lists_the_networks_it_is_on() -> None:
    names = WlanNames()()
    # Wine's wlanapi opens a handle and lists no interface; a Windows laptop names its network.
    assert all(isinstance(name, str) and name for name in names)
