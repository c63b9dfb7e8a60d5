"""``import`` of an export larger than one request to the app: it goes in pieces,
all checked first, so a bad entry still imports nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from domi_desktop.frontdoor.rpc.protocol import MAX_LINE
from tests.support.fakes import wait_for
from tests.system.test_rpc_socket import cli, env_for, start_daemon

pytestmark = pytest.mark.slow

COUNT = 800


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


def _send_pieces(data: Path, document: dict[str, Any], pieces: int, sent: int) -> list[Any]:
    """What a CLI stopped after ``sent`` of ``pieces`` pieces sent the app: its answers."""
    import socket

    from domi_desktop.frontdoor.rpc.instance import socket_name

    schedules = document["schedules"]
    size = -(-len(schedules) // pieces)
    answers = []
    with socket.socket(socket.AF_UNIX) as client:
        client.connect(socket_name(data))
        reader = client.makefile("rb")
        for index in range(sent):
            params = {
                "document": {**document, "schedules": schedules[index * size:(index + 1) * size]},
                "piece": {"id": "stopped-halfway", "index": index, "count": pieces},
            }  # fmt: skip
            request = {"jsonrpc": "2.0", "id": index, "method": "schedule.import", "params": params}
            client.sendall(json.dumps(request).encode() + b"\n")
            answers.append(json.loads(reader.readline()))
    return answers


def test_an_import_stopped_halfway_makes_nothing_and_one_repeated_makes_no_copies(
    data: Path, daemon: subprocess.Popen[bytes], tmp_path: Path
) -> None:
    whole = document()
    answers = _send_pieces(data, whole, pieces=3, sent=2)
    assert [a["result"]["created"] for a in answers] == [[], []]
    assert count(data) == 0
    path = write(tmp_path / "good.json", whole)
    done = cli(data, "import", "--json", path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["created"] == list(range(1, COUNT + 1))
    again = cli(data, "import", path)
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith(f"already imported: {COUNT} schedule(s) (1, 2, 3,")
    assert count(data) == COUNT


def test_an_import_without_the_app_is_all_or_nothing_when_killed_and_never_twice(
    data: Path, tmp_path: Path
) -> None:
    path = write(tmp_path / "good.json", document())
    importing = subprocess.Popen(
        [sys.executable, "-m", "domi_desktop", "import", path],
        env=env_for(data), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    # Killed once it has the file open: wherever it was, it made all or nothing.
    wait_for(lambda: (data / "domi.sqlite3-wal").exists() or importing.poll() is not None, 60,
             "the import at work")  # fmt: skip
    importing.kill()
    importing.communicate()
    assert count(data) in (0, COUNT)
    for _ in range(2):
        done = cli(data, "import", path)
        assert done.returncode == 0, done.stderr
    assert count(data) == COUNT
