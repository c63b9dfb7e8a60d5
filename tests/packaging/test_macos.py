"""macOS packaging checked on any OS: the app's Info.plist keys and notarytool's verdict."""

from __future__ import annotations

import importlib.util
import json
import plistlib
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from domi_desktop import __version__

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


info = _load("info_plist", ROOT / "packaging/macos/info_plist.py")
notary = _load("notary", ROOT / "packaging/notary.py")


# --- Info.plist -------------------------------------------------------------------------------


@pytest.fixture
def plist() -> dict[str, object]:
    """The keys as written into Contents/Info.plist and read back."""
    data = plistlib.dumps(info.info_plist("domi-desktop", __version__))
    loaded: dict[str, object] = plistlib.loads(data)
    return loaded


def test_the_app_opts_out_of_app_nap(plist: dict[str, object]) -> None:
    assert plist["NSAppSleepDisabled"] is True


def test_the_app_needs_macos_13_like_the_pyside6_wheels(plist: dict[str, object]) -> None:
    assert plist["LSMinimumSystemVersion"] == "13.0"


def test_the_app_is_a_menu_bar_app_with_the_version(plist: dict[str, object]) -> None:
    assert plist["LSUIElement"] is True
    assert plist["CFBundleShortVersionString"] == __version__
    assert plist["CFBundleVersion"] == __version__


def test_the_spec_and_the_build_script_use_these_keys() -> None:
    spec = (ROOT / "packaging/domi-desktop.spec").read_text()
    assert "info_plist=info_plist(APP, VERSION)" in spec
    script = (ROOT / "packaging/build_macos.sh").read_text()
    assert "plist NSAppSleepDisabled | grep -qx true" in script
    assert "plist LSMinimumSystemVersion | grep -qx 13.0" in script


# --- notarytool's verdict ---------------------------------------------------------------------

SUBMISSION = "2efe2717-52ef-43a5-96dc-0797e4ca1041"


def answer(status: str, message: str) -> str:
    return json.dumps({"id": SUBMISSION, "message": message, "status": status})


ACCEPTED = answer("Accepted", "Processing complete")
INVALID = answer("Invalid", "Processing complete")
IN_PROGRESS = answer("In Progress", "Processing")
# What --wait prints before its final JSON when stdout is a file: progress, then the verdict.
WITH_PROGRESS = (
    "Conducting pre-submission checks for app.dmg and initiating connection to the Apple "
    "notary service...\n"
    + json.dumps({"id": SUBMISSION, "path": "/tmp/app.dmg", "message": "Successfully uploaded"})
    + "\n"
    + INVALID
    + "\n"
)


@pytest.mark.parametrize(
    ("output", "status", "accepted"),
    [
        (ACCEPTED, "Accepted", True),
        (INVALID, "Invalid", False),
        (IN_PROGRESS, "In Progress", False),
        (answer("Rejected", "Processing complete"), "Rejected", False),
        (WITH_PROGRESS, "Invalid", False),
    ],
)
def test_only_accepted_is_accepted(output: str, status: str, accepted: bool) -> None:
    submission = notary.parse(output)
    assert submission.status == status
    assert submission.id == SUBMISSION
    assert submission.accepted is accepted


@pytest.mark.parametrize(
    "output",
    [
        "",
        "Error: HTTP status code: 401. Invalid credentials.",
        '{"id": "x", "message": "no status"}',
        '{"status": 3}',
        "[1, 2]",
        "{not json",
    ],
)
def test_anything_else_is_an_error_that_shows_the_output(output: str) -> None:
    with pytest.raises(notary.NotaryError) as caught:
        notary.parse(output)
    assert str(caught.value).startswith("no notarytool JSON with a status in its output: ")


def run(tmp_path: Path, output: str, *args: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "notary.json"
    path.write_text(output)
    return subprocess.run(
        [sys.executable, str(ROOT / "packaging/notary.py"), *args, str(path)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def test_the_command_exits_0_only_for_accepted(tmp_path: Path) -> None:
    done = run(tmp_path, ACCEPTED)
    assert (done.returncode, done.stdout) == (
        0,
        f"notarization {SUBMISSION}: Accepted (Processing complete)\n",
    )
    for output in (INVALID, IN_PROGRESS, "garbage"):
        done = run(tmp_path, output)
        assert done.returncode == 1, output
        assert done.stderr.startswith("notary: "), done.stderr
    assert "Invalid (Processing complete); only 'Accepted' passes" in run(tmp_path, INVALID).stderr


def test_the_command_prints_the_id_for_the_log(tmp_path: Path) -> None:
    done = run(tmp_path, WITH_PROGRESS, "--id")
    assert (done.returncode, done.stdout) == (0, f"{SUBMISSION}\n")
