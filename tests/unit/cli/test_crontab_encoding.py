"""``import-crontab`` of a file that is not UTF-8: refused naming its lines, or read
in the encoding given, with a warning naming each line that reads otherwise than as UTF-8."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

LATIN_1 = (
    b"# sauvegarde\n"
    b"0 9 * * * echo caf\xe9 > /tmp/menu\n"
    b"30 9 * * * true\n"
    b"0 10 * * * echo cr\xe8me br\xfbl\xe9e\n"
)


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "data"
    path.mkdir()
    return path


def cli(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    env["DOMI_DATA_DIR"] = str(data)
    return subprocess.run(
        [sys.executable, "-m", "domi_desktop", *args],
        capture_output=True, text=True, encoding="utf-8", env=env, timeout=60,
    )  # fmt: skip


def commands(data: Path) -> list[str]:
    exported = cli(data, "export")
    assert exported.returncode == 0, exported.stderr
    actions = [s["action"] for s in json.loads(exported.stdout)["schedules"]]
    return [action["shell"] or " ".join(action["argv"]) for action in actions]


def test_a_latin_1_crontab_is_refused_naming_its_lines_and_nothing_is_imported(
    data: Path, tmp_path: Path
) -> None:
    crontab = tmp_path / "crontab"
    crontab.write_bytes(LATIN_1)
    done = cli(data, "import-crontab", str(crontab))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.splitlines() == [
        f"domi-desktop: {crontab}: line(s) 2, 4 are not UTF-8; nothing was imported. Give the"
        " file's encoding to import it as text, e.g. --encoding latin-1"
    ]
    assert commands(data) == []


def test_a_latin_1_crontab_read_as_latin_1_warns_about_each_line_it_changed(
    data: Path, tmp_path: Path
) -> None:
    crontab = tmp_path / "crontab"
    crontab.write_bytes(LATIN_1)
    done = cli(data, "import-crontab", "--encoding", "latin-1", str(crontab))
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if "warning: read as latin-1" in line]
    # "FILE:LINE: warning": the file's name first, a drive letter's colon and all.
    assert [w.removeprefix(f"{crontab}:").split(":")[0] for w in warnings] == ["2", "4"]
    assert "echo café > /tmp/menu" in warnings[0]
    assert commands(data) == ["echo café > /tmp/menu", "true", "echo crème brûlée"]


@pytest.mark.parametrize("encoding", ["klingon", "rot13", "hex"])
def test_an_encoding_that_is_not_a_text_encoding_is_named(
    data: Path, tmp_path: Path, encoding: str
) -> None:
    crontab = tmp_path / "crontab"
    crontab.write_bytes(LATIN_1)
    done = cli(data, "import-crontab", "--encoding", encoding, str(crontab))
    assert done.returncode == 2
    assert done.stderr == (
        f"domi-desktop: --encoding: {encoding!r} is not a text encoding Python knows\n"
    )


def test_a_crontab_that_starts_with_a_byte_order_mark_is_read(data: Path, tmp_path: Path) -> None:
    crontab = tmp_path / "crontab"
    crontab.write_bytes(b"\xef\xbb\xbf*/15 * * * * /usr/local/bin/sync\r\n0 9 * * * report\r\n")
    done = cli(data, "import-crontab", str(crontab), "--dry-run", "--json")
    assert done.returncode == 0, done.stderr
    assert [entry["expr"] for entry in json.loads(done.stdout)["planned"]] == [
        "*/15 * * * *",
        "0 9 * * *",
    ]
    assert "not a number" not in done.stderr
