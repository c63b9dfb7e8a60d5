from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication

from domi_desktop.platform.resume.linux import LogindResumeSource


@pytest.mark.parametrize("address", ["unix:path={tmp}/no-such-socket", "not an address"])
def test_no_system_bus_is_a_status_not_an_error(
    qapp: QCoreApplication, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, address: str
) -> None:
    monkeypatch.setenv("DBUS_SYSTEM_BUS_ADDRESS", address.format(tmp=tmp_path))
    source = LogindResumeSource()

    assert source.start(lambda: None) is False
    assert source.status.startswith("no system bus (logind unavailable): ")
    source.stop()
    source.stop()
