from __future__ import annotations

import plistlib
import sys
import types
from pathlib import Path

import pytest

from domi_desktop.platform.autostart import AutostartError, autostart_for_platform
from domi_desktop.platform.autostart.macos import (
    ENABLED,
    NOT_REGISTERED,
    REQUIRES_APPROVAL,
    LaunchAgentAutostart,
    LoginItemAutostart,
    in_app_bundle,
    main_app_service,
)
from tests.unit.platform.fakes import FakeAppService, FakeNSError

COMMAND = ["/Applications/domi-desktop.app/Contents/MacOS/domi-desktop"]
LOGIN_ITEMS = "Login Items (System Settings > General > Login Items)"
BUNDLED = "/Applications/domi-desktop.app/Contents/MacOS/domi-desktop"


def test_it_writes_the_launch_agent(tmp_path: Path) -> None:
    autostart = autostart_for_platform("darwin", home=tmp_path)
    command = ["/Applications/Domi Desktop.app/Contents/MacOS/domi-desktop", "--quiet"]
    autostart.enable(command)

    path = tmp_path / "Library" / "LaunchAgents" / "org.domi.desktop.plist"
    assert autostart.describe() == str(path)
    with path.open("rb") as file:
        assert plistlib.load(file) == {
            "Label": "org.domi.desktop",
            "ProgramArguments": command,
            "RunAtLoad": True,
            "ProcessType": "Interactive",
            "LimitLoadToSessionType": "Aqua",
            "X-Domi-Desktop": True,
        }


@pytest.mark.parametrize(
    "content",
    [
        plistlib.dumps({"Label": "org.domi.desktop", "ProgramArguments": ["/mine"]}),
        b"not a plist",
    ],
)
def test_it_leaves_a_launch_agent_it_did_not_write_alone(tmp_path: Path, content: bytes) -> None:
    autostart = autostart_for_platform("darwin", home=tmp_path)
    path = Path(autostart.describe())
    path.parent.mkdir(parents=True)
    path.write_bytes(content)

    with pytest.raises(AutostartError, match="not written by domi-desktop"):
        autostart.enable(COMMAND)
    with pytest.raises(AutostartError, match="not written by domi-desktop"):
        autostart.disable()
    assert path.read_bytes() == content


# --- Login Items through SMAppService (macOS 13+, from the bundle) ---------------------------------


def agent_path(home: Path) -> Path:
    return home / "Library" / "LaunchAgents" / "org.domi.desktop.plist"


def login_item(home: Path, service: FakeAppService) -> LoginItemAutostart:
    autostart = autostart_for_platform("darwin", home=home, app_service=service)
    assert isinstance(autostart, LoginItemAutostart)
    return autostart


def test_in_the_bundle_the_app_is_registered_as_a_login_item(tmp_path: Path) -> None:
    service = FakeAppService()
    autostart = login_item(tmp_path, service)
    assert not autostart.is_enabled()

    autostart.enable(COMMAND)

    assert service.calls == ["register"]
    assert autostart.is_enabled()
    assert autostart.describe() == LOGIN_ITEMS
    assert not agent_path(tmp_path).exists()

    autostart.disable()
    assert service.calls == ["register", "unregister"]
    assert not autostart.is_enabled()


def test_switched_off_in_login_items_it_reads_off_and_is_not_registered_again(
    tmp_path: Path,
) -> None:
    service = FakeAppService()
    autostart = login_item(tmp_path, service)
    autostart.enable(COMMAND)
    service.state = NOT_REGISTERED  # the user, in System Settings

    assert not autostart.is_enabled()
    assert autostart.describe() == LOGIN_ITEMS
    assert service.calls == ["register"]


def test_a_registration_waiting_for_approval_is_not_enabled_and_says_where(
    tmp_path: Path,
) -> None:
    service = FakeAppService(after_register=REQUIRES_APPROVAL)
    autostart = login_item(tmp_path, service)
    autostart.enable(COMMAND)

    assert not autostart.is_enabled()
    assert autostart.describe() == f"{LOGIN_ITEMS}, waiting for you to allow it there"
    autostart.disable()  # an approval that never comes can still be withdrawn
    assert service.calls == ["register", "unregister"]


def test_a_failed_registration_falls_back_to_the_launch_agent(tmp_path: Path) -> None:
    service = FakeAppService(register_error=FakeNSError("Operation not permitted"))
    autostart = login_item(tmp_path, service)

    autostart.enable(COMMAND)

    with agent_path(tmp_path).open("rb") as file:
        assert plistlib.load(file)["ProgramArguments"] == COMMAND
    assert autostart.is_enabled()
    assert autostart.describe() == str(agent_path(tmp_path))

    autostart.disable()
    assert not agent_path(tmp_path).exists()
    assert not autostart.is_enabled()
    assert service.calls == ["register"]  # nothing registered, so nothing to unregister


def test_registering_removes_our_old_launch_agent_but_not_someone_elses(tmp_path: Path) -> None:
    LaunchAgentAutostart(agent_path(tmp_path)).enable(["/old/domi-desktop"])
    login_item(tmp_path, FakeAppService()).enable(COMMAND)
    assert not agent_path(tmp_path).exists()

    theirs = plistlib.dumps({"Label": "org.domi.desktop", "ProgramArguments": ["/mine"]})
    agent_path(tmp_path).write_bytes(theirs)
    autostart = login_item(tmp_path, FakeAppService())
    autostart.enable(COMMAND)
    autostart.disable()
    assert agent_path(tmp_path).read_bytes() == theirs


def test_a_refused_unregistration_is_an_error_with_the_reason(tmp_path: Path) -> None:
    service = FakeAppService(unregister_error=FakeNSError("The operation couldn't be completed."))
    autostart = login_item(tmp_path, service)
    autostart.enable(COMMAND)

    with pytest.raises(AutostartError) as raised:
        autostart.disable()
    assert str(raised.value) == (
        f"cannot remove domi-desktop from {LOGIN_ITEMS}: The operation couldn't be completed."
    )
    assert service.state == ENABLED


@pytest.mark.parametrize(
    ("executable", "bundled"),
    [
        (BUNDLED, True),
        ("/Applications/domi-desktop.app/Contents/Resources/domi-desktop", False),
        ("/Applications/domi-desktop/Contents/MacOS/domi-desktop", False),
        ("/usr/local/bin/python3", False),
    ],
)
def test_it_knows_the_program_of_an_app_bundle(executable: str, bundled: bool) -> None:
    assert in_app_bundle(executable) is bundled


def service_management(monkeypatch: pytest.MonkeyPatch, framework: object) -> None:
    monkeypatch.setitem(sys.modules, "ServiceManagement", framework)
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", BUNDLED)


def test_the_bundle_on_macos_13_gets_the_main_app_service(monkeypatch: pytest.MonkeyPatch) -> None:
    service = FakeAppService()
    framework = types.SimpleNamespace(
        SMAppService=types.SimpleNamespace(mainAppService=lambda: service)
    )
    service_management(monkeypatch, framework)
    assert main_app_service() is service


def test_before_macos_13_there_is_no_app_service(monkeypatch: pytest.MonkeyPatch) -> None:
    service_management(monkeypatch, types.SimpleNamespace())  # the framework lacks SMAppService
    assert main_app_service() is None


def test_python_run_from_a_framework_build_is_not_the_bundle(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    service_management(monkeypatch, types.SimpleNamespace())
    monkeypatch.delattr(sys, "frozen")
    monkeypatch.setattr(
        sys,
        "executable",
        "/Library/Frameworks/Python.framework/Resources/Python.app/Contents/MacOS/Python",
    )
    assert main_app_service() is None


def test_outside_the_bundle_it_is_the_launch_agent(tmp_path: Path) -> None:
    autostart = autostart_for_platform("darwin", home=tmp_path)
    assert isinstance(autostart, LaunchAgentAutostart)
    assert autostart.describe() == str(agent_path(tmp_path))
