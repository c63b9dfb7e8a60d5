"""A schedule's notes through the real entry point (subprocesses, no app running): kept by
``schedule add/edit --notes``, shown by ``show`` and ``list --json``, carried by export and import,
and bad notes refused with exit 2 and a message naming the option's field."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

NOTES = "Feeds the Monday dashboard.\nIf it fails:\tcall Ana (ops), 电话 1234"


def domi(data: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    runtime = data.parent / "run"
    runtime.mkdir(mode=0o700, exist_ok=True)
    env = {**os.environ, "DOMI_DATA_DIR": str(data), "XDG_RUNTIME_DIR": str(runtime)}
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    return subprocess.run(
        [sys.executable, "-m", "domi_desktop", *args],
        capture_output=True, text=True, encoding="utf-8", env=env, input=stdin, timeout=60,
    )  # fmt: skip


def ok(data: Path, *args: str, stdin: str | None = None) -> str:
    done = domi(data, *args, stdin=stdin)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return tmp_path / "data"


def test_notes_are_added_shown_listed_edited_and_cleared(data: Path) -> None:
    add = ("schedule", "add", "report", "--cron", "0 9 * * 1", "--notes", NOTES, "--", "true")
    assert ok(data, *add).strip() == "1"
    assert json.loads(ok(data, "schedule", "show", "1", "--json"))["notes"] == NOTES
    [listed] = json.loads(ok(data, "schedule", "list", "--json"))
    assert listed["notes"] == NOTES
    shown = ok(data, "schedule", "show", "1").splitlines()
    at = shown.index("      notes: Feeds the Monday dashboard.")
    assert shown[at + 1] == "             If it fails:\\tcall Ana (ops), 电话 1234"

    # Another option leaves the notes alone; --notes replaces them; '' clears them.
    renamed = json.loads(ok(data, "schedule", "edit", "1", "--name", "weekly", "--json"))
    assert (renamed["name"], renamed["notes"]) == ("weekly", NOTES)
    edited = json.loads(ok(data, "schedule", "edit", "1", "--notes", "owner: ops", "--json"))
    assert edited["notes"] == "owner: ops"
    assert ok(data, "schedule", "show", "1").splitlines()[-1] == "      notes: owner: ops"
    cleared = json.loads(ok(data, "schedule", "edit", "1", "--notes", "", "--json"))
    assert cleared["notes"] == ""
    assert "notes:" not in ok(data, "schedule", "show", "1")


@pytest.mark.parametrize(
    ("notes", "message"),
    [
        ("x" * 4001, "notes: is too long (4001 characters, at most 4000)"),
        ("red \x1b[31m alert", "notes: has a control character (U+001B) at position 5"),
    ],
)
def test_bad_notes_are_refused_with_exit_2_naming_the_field(
    data: Path, notes: str, message: str
) -> None:
    refused = domi(
        data, "schedule", "add", "x", "--cron", "0 9 * * *", "--notes", notes, "--", "true"
    )
    assert refused.returncode == 2
    assert message in refused.stderr and "Traceback" not in refused.stderr
    assert json.loads(ok(data, "schedule", "list", "--json")) == []
    ok(data, "schedule", "add", "x", "--cron", "0 9 * * *", "--notes", "kept", "--", "true")
    refused = domi(data, "schedule", "edit", "1", "--notes", notes)
    assert refused.returncode == 2 and message in refused.stderr
    assert json.loads(ok(data, "schedule", "show", "1", "--json"))["notes"] == "kept"


def test_notes_travel_in_an_export_and_an_older_export_without_them_imports(
    data: Path, tmp_path: Path
) -> None:
    ok(data, "schedule", "add", "report", "--cron", "0 9 * * 1", "--notes", NOTES, "--", "true")
    exported = ok(data, "export")
    assert json.loads(exported)["schedules"][0]["notes"] == NOTES
    elsewhere = tmp_path / "elsewhere"
    assert json.loads(ok(elsewhere, "import", "-", "--json", stdin=exported))["created"] == [1]
    assert json.loads(ok(elsewhere, "schedule", "show", "1", "--json"))["notes"] == NOTES

    older = json.loads(exported)
    del older["schedules"][0]["notes"]
    ok(elsewhere, "import", "-", stdin=json.dumps(older))
    assert json.loads(ok(elsewhere, "schedule", "show", "2", "--json"))["notes"] == ""
