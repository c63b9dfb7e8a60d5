"""The WLAN API called for real: wlanapi.dll opened, its interfaces listed and asked for their
connection, and every allocation given back; then the app's reader of network names. Not its
``start``: Qt's network information backend does not load under Wine 8 (``loadDefaultBackend``
never returned in 5 minutes)."""

from __future__ import annotations

import pytest

from domi_desktop.platform.conditions import resource_readers_for_platform
from domi_desktop.platform.conditions.winwlan import WlanNames

pytestmark = pytest.mark.windows_only


def test_the_wlan_api_lists_the_networks_it_is_on() -> None:
    names = WlanNames()()
    # Wine's wlanapi opens a handle and lists no interface; a Windows laptop names its network.
    assert all(isinstance(name, str) and name for name in names)


def test_the_apps_reader_reads_them() -> None:
    reader = resource_readers_for_platform("win32").names
    assert reader is not None
    names = reader.read()
    assert all(isinstance(name, str) and name for name in names)
    assert not reader.hidden
