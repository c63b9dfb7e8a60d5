"""The Windows setup as a person runs it: installed silently for this user, the installed app
started, answering over its pipe and running a job, quit, then uninstalled.

``packaging/wine/release.py`` builds the setup (the bundle by the Windows CPython, ``ISCC.exe``,
signed) and ``kit.py test`` hands its path and the bundle's over (``DOMI_WINDOWS_SETUP``,
``DOMI_WINDOWS_BUNDLE``) in the Windows stage's fresh prefix. Under Wine every wait is for an
event, with a deadline that only a hang reaches.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from domi_desktop.paths import resolve_data_dir

pytestmark = pytest.mark.windows_only

APP = "domi-desktop"
APP_ID = "{5B0E7C0A-3D7B-4E69-9C3A-7D1F2A6C4E21}_is1"
RUN_KEY = r"Software\Microsoft\Windows\CurrentVersion\Run"
UNINSTALL_KEY = rf"Software\Microsoft\Windows\CurrentVersion\Uninstall\{APP_ID}"
INSTALLER_FILES = {"unins000.exe", "unins000.dat"}
SETUP_TIMEOUT = 600.0
START_TIMEOUT = 180.0
CLI_TIMEOUT = 180.0
NEVER = "0 0 1 1 *"  # runs only when asked (run-now)


def wait_until(condition: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout:g} s: {what}")
        time.sleep(0.25)


def hkcu_value(key: str, name: str) -> str | None:
    import winreg

    try:
        with winreg.OpenKey(winreg.HKEY_CURRENT_USER, key) as opened:
            value, _kind = winreg.QueryValueEx(opened, name)
    except FileNotFoundError:
        return None
    return str(value)


def hkcu_key_exists(key: str) -> bool:
    import winreg

    try:
        winreg.OpenKey(winreg.HKEY_CURRENT_USER, key).Close()
    except FileNotFoundError:
        return False
    return True


def files_under(folder: Path) -> set[str]:
    return {
        path.relative_to(folder).as_posix().lower() for path in folder.rglob("*") if path.is_file()
    }


@pytest.fixture(scope="module")
def release() -> tuple[Path, Path]:
    setup, bundle = os.environ.get("DOMI_WINDOWS_SETUP"), os.environ.get("DOMI_WINDOWS_BUNDLE")
    if not setup or not bundle:
        pytest.skip("no setup handed over: packaging/wine/release.py build, then kit.py test")
    return Path(setup), Path(bundle)


@pytest.fixture(scope="module")
def installed(
    release: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Path]:
    """The app installed by its setup, per user, with start at login chosen; removed afterwards
    by its uninstaller if the test did not get that far."""
    setup, _bundle = release
    log = tmp_path_factory.mktemp("setup") / "setup.log"
    done = subprocess.run(
        [str(setup), "/VERYSILENT", "/SUPPRESSMSGBOXES", "/NORESTART", "/TASKS=startatlogin",
         f"/LOG={log}"],
        capture_output=True, text=True, timeout=SETUP_TIMEOUT, check=False,
    )  # fmt: skip
    setup_log = log.read_text(encoding="utf-8-sig", errors="replace") if log.exists() else ""
    assert done.returncode == 0, f"setup exited {done.returncode}\n{setup_log}"
    folder = Path(os.environ["LOCALAPPDATA"]) / "Programs" / APP
    yield folder
    uninstaller = folder / "unins000.exe"
    if uninstaller.exists():
        subprocess.run(
            [str(uninstaller), "/VERYSILENT", "/SUPPRESSMSGBOXES", "/NORESTART"],
            timeout=SETUP_TIMEOUT, check=False,
        )  # fmt: skip


def cli(exe: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(exe), *args], env=env, capture_output=True, text=True, timeout=CLI_TIMEOUT,
        check=False,
    )  # fmt: skip


def test_the_setup_installs_runs_and_uninstalls_leaving_the_user_s_data(
    release: tuple[Path, Path], installed: Path, tmp_path: Path
) -> None:
    _setup, bundle = release
    # Where Windows puts a per-user install, the same files as the bundle plus the uninstaller.
    assert (installed / f"{APP}.exe").is_file() and (installed / f"{APP}-cli.exe").is_file()
    assert files_under(installed) - INSTALLER_FILES == files_under(bundle)
    assert files_under(installed) >= INSTALLER_FILES
    assert hkcu_value(RUN_KEY, APP) == f'"{installed / (APP + ".exe")}"'
    assert hkcu_value(UNINSTALL_KEY, "DisplayName") == APP
    assert hkcu_value(UNINSTALL_KEY, "InstallLocation") == f"{installed}\\"

    # The installed app, with the user's own data folder (no DOMI_DATA_DIR): the uninstaller
    # must leave that folder alone.
    exe = installed / f"{APP}-cli.exe"
    env = {key: value for key, value in os.environ.items() if key != "DOMI_DATA_DIR"}
    log = tmp_path / "app.stderr"
    with log.open("wb") as stderr:
        app = subprocess.Popen(
            [str(exe), "--headless"],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr,
        )  # fmt: skip
    try:

        def status() -> dict[str, Any] | None:
            assert app.poll() is None, (
                f"the installed app exited {app.returncode}: {log.read_text()}"
            )
            done = cli(exe, env, "status", "--json")
            return json.loads(done.stdout) if done.returncode == 0 else None

        wait_until(status, START_TIMEOUT, "status finds the installed app over its pipe")
        added = cli(exe, env, "schedule", "add", "installed", "--cron", NEVER, "--json", "--",
                    "cmd.exe", "/c", "echo hello from the installed app")  # fmt: skip
        assert added.returncode == 0, added.stderr
        ran = cli(exe, env, "run-now", str(json.loads(added.stdout)["id"]), "--json")
        run = json.loads(ran.stdout)
        assert run["status"] == "succeeded", run
        assert "hello from the installed app" in (run.get("output_tail") or ""), run
        quit_ = cli(exe, env, "quit")
        assert quit_.returncode == 0, quit_.stderr
        assert app.wait(timeout=CLI_TIMEOUT) == 0, log.read_text(errors="replace")
    finally:
        if app.poll() is None:
            app.kill()
            app.wait()
    # The per-user folder the app itself resolves (platformdirs), where the job was stored.
    data = resolve_data_dir()
    kept = {path for path in data.rglob("*") if path.is_file()}
    assert kept, f"the installed app stored nothing in {data}"

    done = subprocess.run(
        [str(installed / "unins000.exe"), "/VERYSILENT", "/SUPPRESSMSGBOXES", "/NORESTART"],
        timeout=SETUP_TIMEOUT, check=False,
    )  # fmt: skip
    assert done.returncode == 0
    # The uninstaller removes its own unins000.exe from a helper process once it has exited.
    wait_until(lambda: not installed.exists(), 120, f"{installed} removed by the uninstaller")
    assert hkcu_value(RUN_KEY, APP) is None
    assert not hkcu_key_exists(UNINSTALL_KEY)
    assert all(path.exists() for path in kept), f"the user's data in {data} went"
