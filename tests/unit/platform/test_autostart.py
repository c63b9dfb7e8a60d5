from __future__ import annotations

import configparser
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domi_desktop.platform.autostart import (
    AutostartError,
    autostart_for_platform,
    default_command,
    gui_executable,
)
from domi_desktop.platform.autostart.linux import XdgAutostart, desktop_exec
from domi_desktop.ports import Autostart
from tests.unit.platform.fakes import FakeAppService, MemoryRegistry

COMMAND = ["/usr/bin/python3", "-m", "domi_desktop"]


def read_desktop_entry(path: Path) -> dict[str, str]:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    parser.read_string(path.read_text(encoding="utf-8"))
    return dict(parser["Desktop Entry"])


def parse_exec(value: str) -> list[str]:
    """The Desktop Entry spec's reading of an Exec value, done independently of the writer."""
    string_escapes = {"s": " ", "n": "\n", "t": "\t", "r": "\r", "\\": "\\"}
    text = re.sub(r"\\(.)", lambda m: string_escapes.get(m[1], m[0]), value)
    argv: list[str] = []
    current: list[str] | None = None
    index = 0
    while index < len(text):
        char = text[index]
        if char == " ":
            if current is not None:
                argv.append("".join(current))
            current = None
        elif char == '"':
            current = [] if current is None else current
            index += 1
            while text[index] != '"':
                if text[index] == "\\":
                    index += 1
                current.append(text[index])
                index += 1
        else:
            current = [] if current is None else current
            current.append(char)
        index += 1
    if current is not None:
        argv.append("".join(current))
    return [arg.replace("%%", "%") for arg in argv]


def xdg(home: Path) -> Autostart:
    return autostart_for_platform("linux", home=home, env={})


# --- Linux -----------------------------------------------------------------------------------


def test_it_writes_the_xdg_autostart_file(tmp_path: Path) -> None:
    autostart = xdg(tmp_path)
    autostart.enable(COMMAND)

    path = tmp_path / ".config" / "autostart" / "domi-desktop.desktop"
    assert autostart.describe() == str(path)
    assert path.read_text(encoding="utf-8") == (
        "[Desktop Entry]\n"
        "Type=Application\n"
        "Name=domi-desktop\n"
        "Comment=Runs your recurring jobs on cron schedules\n"
        "Exec=/usr/bin/python3 -m domi_desktop\n"
        "TryExec=/usr/bin/python3\n"
        "Icon=domi-desktop\n"
        "Terminal=false\n"
        "Categories=Utility;\n"
        "X-GNOME-Autostart-enabled=true\n"
        "X-GNOME-Autostart-Delay=5\n"
        "X-Domi-Desktop=1\n"
    )
    entry = read_desktop_entry(path)
    assert entry["Type"] == "Application"
    assert entry["Terminal"] == "false"
    assert entry["X-Domi-Desktop"] == "1"
    assert autostart.is_enabled()


@pytest.mark.posix_only  # an XDG session's entry: a Windows path's backslashes are escaped in it
def test_try_exec_names_the_program_so_a_session_skips_the_entry_once_it_is_gone(
    tmp_path: Path,
) -> None:
    # KDE's and Xfce's sessions read TryExec; the value is a plain string, not Exec-quoted.
    program = tmp_path / "dir with space" / "50% domi-desktop"
    autostart = XdgAutostart(tmp_path / "domi-desktop.desktop")
    autostart.enable([str(program), "--quiet"])
    assert read_desktop_entry(Path(autostart.describe()))["TryExec"] == str(program)


def test_it_honours_an_absolute_xdg_config_home_only(tmp_path: Path) -> None:
    config = tmp_path / "elsewhere"
    absolute = autostart_for_platform("linux", home=tmp_path, env={"XDG_CONFIG_HOME": str(config)})
    relative = autostart_for_platform("linux", home=tmp_path, env={"XDG_CONFIG_HOME": "rel"})
    assert absolute.describe() == str(config / "autostart" / "domi-desktop.desktop")
    assert relative.describe() == str(tmp_path / ".config" / "autostart" / "domi-desktop.desktop")


@pytest.mark.parametrize(
    ("command", "exec_value"),
    [
        (["/opt/My Apps/domi desktop"], '"/opt/My Apps/domi desktop"'),
        (["/home/o'neil/domi"], '"/home/o\'neil/domi"'),
        (["/bin/domi", 'say "hi"'], '/bin/domi "say \\\\"hi\\\\""'),
        # The spec's own examples: a backslash is four in the file, a dollar sign is \\$.
        (["/bin/domi", "a\\b"], '/bin/domi "a\\\\\\\\b"'),
        (["/bin/domi", "$HOME"], '/bin/domi "\\\\$HOME"'),
        (["/bin/domi", "100%", "%f"], "/bin/domi 100%% %%f"),
        (["/bin/domi", ""], '/bin/domi ""'),
        (["/bin/domi", "two\nlines"], '/bin/domi "two\\nlines"'),
    ],
)
def test_it_quotes_exec_by_the_desktop_entry_spec(
    tmp_path: Path, command: list[str], exec_value: str
) -> None:
    xdg(tmp_path).enable(command)
    written = read_desktop_entry(tmp_path / ".config" / "autostart" / "domi-desktop.desktop")
    assert written["Exec"] == exec_value
    assert parse_exec(written["Exec"]) == command


ARGUMENT_CHARACTERS = st.characters(exclude_categories=("Cs", "Cc")) | st.sampled_from(
    " \t\n\r\\\"'$`%;#"
)


@given(st.lists(st.text(ARGUMENT_CHARACTERS), min_size=1))
def test_exec_reads_back_as_the_same_arguments(command: list[str]) -> None:
    assert parse_exec(desktop_exec(command)) == command


@pytest.mark.linux_only
@pytest.mark.skipif(shutil.which("gio") is None, reason="needs GLib's gio (libglib2.0-bin)")
def test_glib_launches_the_entry_with_the_exact_arguments(tmp_path: Path) -> None:
    folder = tmp_path / "dir with space"
    folder.mkdir()
    program = folder / "dump argv.py"
    program.write_text(
        f"#!{sys.executable}\nimport json, os, sys\n"
        "open(os.environ['DUMP_TO'], 'w').write(json.dumps(sys.argv[1:]))\n"
    )
    program.chmod(0o755)
    arguments = [
        "with space",
        'quo"te',
        "it's",
        "back\\slash",
        "$HOME",
        "`tick`",
        "100%",
        "50% off",
    ]
    arguments += ["", "two\nlines", "cr\rhere", "ü 中"]
    autostart = XdgAutostart(tmp_path / "domi-desktop.desktop")
    autostart.enable([str(program), *arguments])
    dump = tmp_path / "argv.json"

    subprocess.run(
        ["gio", "launch", autostart.describe()],
        env={**os.environ, "DUMP_TO": str(dump)},
        check=True,
        timeout=30,
    )

    deadline = time.monotonic() + 60  # gio returns once the program is spawned, not finished
    while not (dump.exists() and dump.read_text()) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert json.loads(dump.read_text()) == arguments


def test_it_leaves_a_file_it_did_not_write_alone(tmp_path: Path) -> None:
    autostart = xdg(tmp_path)
    path = Path(autostart.describe())
    path.parent.mkdir(parents=True)
    handmade = "[Desktop Entry]\nType=Application\nName=mine\nExec=/usr/local/bin/domi --quiet\n"
    path.write_text(handmade)

    with pytest.raises(AutostartError, match="not written by domi-desktop"):
        autostart.enable(COMMAND)
    with pytest.raises(AutostartError, match="not written by domi-desktop"):
        autostart.disable()
    assert path.read_text() == handmade
    assert autostart.is_enabled()


@pytest.mark.parametrize("switch_off", ["Hidden=true", "X-GNOME-Autostart-enabled=false"])
def test_an_entry_switched_off_in_place_is_not_enabled_until_enabled_again(
    tmp_path: Path, switch_off: str
) -> None:
    autostart = xdg(tmp_path)
    autostart.enable(COMMAND)
    path = Path(autostart.describe())
    path.write_text(path.read_text().replace("X-GNOME-Autostart-enabled=true", switch_off))
    assert not autostart.is_enabled()

    autostart.enable(COMMAND)
    assert autostart.is_enabled()


def test_a_file_where_the_folder_should_be_gives_a_message_naming_the_path(
    tmp_path: Path,
) -> None:
    (tmp_path / ".config").mkdir()
    (tmp_path / ".config" / "autostart").write_text("not a folder")
    with pytest.raises(AutostartError, match=re.escape(str(tmp_path / ".config" / "autostart"))):
        xdg(tmp_path).enable(COMMAND)


# --- every backend ---------------------------------------------------------------------------


@pytest.fixture(params=["linux", "darwin", "darwin login item", "win32"])
def any_autostart(
    request: pytest.FixtureRequest, tmp_path: Path, registry: MemoryRegistry
) -> Autostart:
    platform, _space, kind = request.param.partition(" ")
    service = FakeAppService() if kind == "login item" else None
    return autostart_for_platform(
        platform, home=tmp_path, env={}, registry=registry, app_service=service
    )


def test_enable_and_disable_round_trip_and_repeat(any_autostart: Autostart) -> None:
    assert not any_autostart.is_enabled()
    any_autostart.disable()  # nothing to remove is fine

    any_autostart.enable(COMMAND)
    any_autostart.enable(COMMAND)
    assert any_autostart.is_enabled()

    any_autostart.disable()
    any_autostart.disable()
    assert not any_autostart.is_enabled()


def test_enable_replaces_our_own_entry(any_autostart: Autostart, tmp_path: Path) -> None:
    any_autostart.enable(["/old/domi-desktop"])
    any_autostart.enable(["/new place/domi-desktop"])
    assert any_autostart.is_enabled()
    written = "\n".join(p.read_text(errors="replace") for p in tmp_path.rglob("*") if p.is_file())
    assert "/old/domi-desktop" not in written
    # No temporary file is left behind next to the entry.
    assert all(not p.name.endswith(".tmp") for p in tmp_path.rglob("*"))


@pytest.mark.parametrize(
    ("command", "error"),
    [([], AutostartError), ([""], AutostartError), ("/bin/domi", TypeError)],
)
def test_it_refuses_a_command_that_cannot_start_anything(
    any_autostart: Autostart, command: list[str], error: type[Exception]
) -> None:
    with pytest.raises(error):
        any_autostart.enable(command)
    assert not any_autostart.is_enabled()


# --- the command -----------------------------------------------------------------------------


def test_the_default_command_runs_this_interpreter_on_the_package(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delattr(sys, "frozen", raising=False)
    assert default_command() == [gui_executable(sys.executable), "-m", "domi_desktop"]


def test_the_default_command_of_a_bundle_is_its_executable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    bundle = str(tmp_path / "domi-desktop")
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", bundle)
    assert default_command() == [bundle]


@pytest.mark.parametrize(
    ("platform", "with_pythonw", "expected"),
    [("win32", True, "pythonw.exe"), ("win32", False, "python.exe"), ("linux", True, "python.exe")],
)
def test_windows_starts_the_windowless_interpreter_when_there_is_one(
    tmp_path: Path, platform: str, with_pythonw: bool, expected: str
) -> None:
    (tmp_path / "python.exe").touch()
    if with_pythonw:
        (tmp_path / "pythonw.exe").touch()
    chosen = gui_executable(str(tmp_path / "python.exe"), platform)
    assert chosen == str(tmp_path / expected)
