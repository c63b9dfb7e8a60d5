"""``import`` of an export larger than one request to the app (issue 26 §4): it goes in pieces,
all checked first, so a bad entry still imports nothing."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from domi_desktop.frontdoor.rpc.protocol import MAX_LINE
from tests.system.test_rpc_socket import cli, start_daemon

pytestmark = pytest.mark.slow

COUNT = 800


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    path = tmp_path / "data"
    path.mkdir()
    return path


@pytest.fixture
def daemon(data: Path) -> Iterator[subprocess.Popen[bytes]]:
    process = start_daemon(data)
    try:
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def document(**fault: Any) -> dict[str, Any]:
    schedules = [
        {"name": f"report {index}", "expr": "0 9 * * *", "tz": "UTC", "enabled": False,
         "action": {"kind": "command", "argv": ["echo", f"{index} " + "x" * 1800]}}
        for index in range(COUNT)
    ]  # fmt: skip
    schedules[COUNT - 10].update(fault)
    return {"format": "domi-desktop/schedules", "version": 1, "schedules": schedules}


def write(path: Path, value: dict[str, Any]) -> str:
    path.write_text(json.dumps(value))
    assert path.stat().st_size > MAX_LINE  # more than one request can carry
    return str(path)


def count(data: Path) -> int:
    listed = cli(data, "schedule", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    return len(json.loads(listed.stdout))


def test_an_import_larger_than_a_request_goes_to_the_running_app_whole(
    data: Path, daemon: subprocess.Popen[bytes], tmp_path: Path
) -> None:
    bad = cli(data, "import", write(tmp_path / "bad.json", document(expr="0 9 * *")))
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert bad.stderr.startswith(f"domi-desktop: schedules[{COUNT - 10}].expr: "), bad.stderr
    assert count(data) == 0
    not_an_export = tmp_path / "list.json"
    not_an_export.write_text(json.dumps(document()["schedules"]))
    refused = cli(data, "import", str(not_an_export))
    assert refused.returncode == 2
    assert refused.stderr.startswith("domi-desktop: document: is not a domi-desktop export")

    dry = cli(data, "import", "--dry-run", write(tmp_path / "good.json", document()))
    assert dry.returncode == 0 and f"{COUNT} schedule(s) would be imported" in dry.stdout
    assert count(data) == 0

    done = cli(data, "import", "--json", str(tmp_path / "good.json"))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"created": list(range(1, COUNT + 1)), "checked": COUNT}
    listed = json.loads(cli(data, "schedule", "list", "--json").stdout)
    assert [s["name"] for s in listed] == [f"report {index}" for index in range(COUNT)]
