from __future__ import annotations

import sys
from pathlib import Path

import pytest

from domi_desktop.platform.autostart import (
    AutostartError,
    autostart_for_platform,
    default_command,
    gui_executable,
)
from domi_desktop.platform.autostart.windows import APPROVED, RUN_KEY, STARTUP_APPROVED_KEY
from tests.unit.platform.fakes import MemoryRegistry

WHERE = "HKEY_CURRENT_USER\\Software\\Microsoft\\Windows\\CurrentVersion\\Run, value domi-desktop"
# Task Manager's "Disabled": the state byte, padding, then the FILETIME of the click.
SWITCHED_OFF = bytes.fromhex("03000000 b0e2c4a1d3f4da01".replace(" ", ""))


@pytest.mark.parametrize(
    ("command", "value"),
    [
        (
            ["C:\\Program Files\\Domi\\domi-desktop.exe"],
            '"C:\\Program Files\\Domi\\domi-desktop.exe"',
        ),
        (
            ["C:\\Python 3\\pythonw.exe", "-m", "domi_desktop", 'say "hi"'],
            '"C:\\Python 3\\pythonw.exe" -m domi_desktop "say \\"hi\\""',
        ),
    ],
)
def test_it_writes_a_quoted_command_line_under_the_run_key_and_approves_it(
    registry: MemoryRegistry, command: list[str], value: str
) -> None:
    autostart = autostart_for_platform("win32", registry=registry)
    autostart.enable(command)
    assert registry.keys == {
        "Software\\Microsoft\\Windows\\CurrentVersion\\Run": {"domi-desktop": value},
        "Software\\Microsoft\\Windows\\CurrentVersion\\Explorer\\StartupApproved\\Run": {
            "domi-desktop": b"\x02" + bytes(11)
        },
    }
    assert autostart.describe() == WHERE


@pytest.mark.parametrize(
    ("approved", "enabled"),
    [
        (None, True),  # Explorer writes the value only once someone uses the switch
        (APPROVED, True),
        (bytes.fromhex("060000000000000000000000"), True),
        (SWITCHED_OFF, False),
        (bytes.fromhex("070000000000000000000000"), False),
    ],
)
def test_it_reads_the_users_startup_switch(
    registry: MemoryRegistry, approved: bytes | None, enabled: bool
) -> None:
    registry.set(RUN_KEY, "domi-desktop", '"C:\\Domi\\domi-desktop.exe"')
    if approved is not None:
        registry.set(STARTUP_APPROVED_KEY, "domi-desktop", approved)
    autostart = autostart_for_platform("win32", registry=registry)
    assert autostart.is_enabled() is enabled


def test_switched_off_in_task_manager_it_says_so_and_stays_off(registry: MemoryRegistry) -> None:
    autostart = autostart_for_platform("win32", registry=registry)
    autostart.enable(["C:\\Domi\\domi-desktop.exe"])
    registry.set(STARTUP_APPROVED_KEY, "domi-desktop", SWITCHED_OFF)  # the user, in Task Manager
    before = {key: dict(values) for key, values in registry.keys.items()}

    assert not autostart.is_enabled()
    assert autostart.describe() == (
        f"{WHERE} (disabled by you in Task Manager or Settings > Apps > Startup)"
    )
    assert registry.keys == before  # reading wrote nothing back

    # Only the user's own click in our Settings (enable) switches it on again.
    autostart.enable(["C:\\Domi\\domi-desktop.exe"])
    assert registry.get(STARTUP_APPROVED_KEY, "domi-desktop") == APPROVED
    assert autostart.is_enabled()
    assert autostart.describe() == WHERE


def test_disable_removes_the_run_value_and_the_switch(registry: MemoryRegistry) -> None:
    autostart = autostart_for_platform("win32", registry=registry)
    autostart.enable(["C:\\Domi\\domi-desktop.exe"])
    registry.set(STARTUP_APPROVED_KEY, "domi-desktop", SWITCHED_OFF)
    registry.set(RUN_KEY, "OneDrive", "C:\\OneDrive.exe")

    autostart.disable()

    assert registry.keys == {RUN_KEY: {"OneDrive": "C:\\OneDrive.exe"}, STARTUP_APPROVED_KEY: {}}
    assert not autostart.is_enabled()


@pytest.mark.posix_only  # the real registry is on Windows
def test_the_real_registry_is_only_used_on_windows() -> None:
    with pytest.raises(AutostartError, match="only on Windows"):
        autostart_for_platform("win32")


@pytest.mark.parametrize(
    "running", ["domi-desktop-cli.exe", "DOMI-DESKTOP-CLI.EXE", "domi-desktop.exe"]
)
def test_the_frozen_build_starts_the_windowed_exe_even_from_the_cli_exe(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, running: str
) -> None:
    # The bundle's two programs (packaging/domi-desktop.spec): the tray app and the console CLI.
    (tmp_path / "domi-desktop.exe").touch()
    (tmp_path / "domi-desktop-cli.exe").touch()
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", str(tmp_path / running))
    monkeypatch.setattr(sys, "platform", "win32")
    assert default_command() == [str(tmp_path / "domi-desktop.exe")]


def test_a_cli_exe_without_its_windowed_twin_is_kept(tmp_path: Path) -> None:
    cli = tmp_path / "domi-desktop-cli.exe"
    cli.touch()
    assert gui_executable(str(cli), "win32") == str(cli)


def test_off_windows_the_cli_name_means_nothing(tmp_path: Path) -> None:
    (tmp_path / "domi-desktop.exe").touch()
    cli = str(tmp_path / "domi-desktop-cli.exe")
    assert gui_executable(cli, "linux") == cli
