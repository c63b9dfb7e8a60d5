"""The app answers only its own user's clients: a client of another uid that reaches the socket
(its directory's mode changed under the running app) is closed unanswered."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from domi_desktop.frontdoor.rpc.instance import socket_name
from tests.support.fakes import wait_for
from tests.support.processes import killed_if_unready, stop
from tests.system.test_rpc_socket import NOBODY, SYSTEM_PYTHON

CLIENT = """
import socket, sys
client = socket.socket(socket.AF_UNIX)
client.settimeout(20)
client.connect(sys.argv[1])
client.sendall(b'{"jsonrpc": "2.0", "id": 1, "method": "schedule.list"}\\n')
answer = b""
try:
    while chunk := client.recv(65536):
        answer += chunk
        if answer.endswith(b"\\n"):
            break
except OSError as error:
    print("error", error, file=sys.stderr)
sys.stdout.buffer.write(answer)
"""


@pytest.fixture
def runtime() -> Iterator[Path]:
    """A socket directory of its own (never the shared /tmp/domi-0 other tests use)."""
    folder = Path(tempfile.mkdtemp(prefix="domi-peer-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "domi_desktop", *args],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip


def _ask_as(user: int | None, socket_path: str) -> bytes:
    done = subprocess.run(
        [SYSTEM_PYTHON, "-c", CLIENT, socket_path],
        capture_output=True, timeout=60, user=user, group=user,
    )  # fmt: skip
    return done.stdout


@pytest.mark.slow
@pytest.mark.linux_only
def test_a_client_of_another_user_is_closed_unanswered_and_ours_still_answered(
    tmp_path: Path, runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if os.getuid() != 0 or not os.access(SYSTEM_PYTHON, os.X_OK):
        pytest.skip("needs root and a system python to connect as another user")
    data = tmp_path / "data"
    data.mkdir()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    env = {**os.environ, "DOMI_DATA_DIR": str(data), "XDG_RUNTIME_DIR": str(runtime),
           "QT_QPA_PLATFORM": "offscreen",
           "DBUS_SYSTEM_BUS_ADDRESS": f"unix:path={data}/no-such-bus"}  # fmt: skip
    with (tmp_path / "daemon.stderr").open("ab") as stderr:
        daemon = subprocess.Popen(
            [sys.executable, "-m", "domi_desktop", "--headless"],
            env=env, stdout=subprocess.DEVNULL, stderr=stderr,
        )  # fmt: skip
    try:
        with killed_if_unready(daemon):
            wait_for(lambda: _cli(env, "status", "--json").returncode == 0, 60, "the socket")
        path = socket_name(data)
        assert Path(path).parent == runtime
        # What a mistaken chmod (or a tool) does: the directory and socket open to all.
        runtime.chmod(0o755)
        os.chmod(path, 0o777)
        assert _ask_as(NOBODY, path) == b""
        mine = json.loads(_ask_as(None, path))
        assert mine["id"] == 1 and mine["result"] == []
    finally:
        assert stop(daemon) == 0
    assert "refused a client of uid 65534" in (tmp_path / "daemon.stderr").read_text()


class _Users:
    """The Win32 calls behind the pipe check, answered as a test says."""

    def __init__(self, client_sid: str, *, fail: bool = False) -> None:
        self.client_sid, self.fail = client_sid, fail

    def pipe_client_pid(self, handle: int) -> int:
        if self.fail:
            raise OSError(5, "GetNamedPipeClientProcessId failed (Windows error 5)")
        return 4242

    def user_sid(self, pid: int | None) -> str:
        return "S-1-5-21-1-1001" if pid is None else self.client_sid


@pytest.mark.parametrize(
    ("users", "refused"),
    [
        (_Users("S-1-5-21-1-1001"), None),
        (_Users("S-1-5-21-1-1002"), "a client (pid 4242) of S-1-5-21-1-1002, not of this user"),
        (_Users("", fail=True), "a client nobody can vouch for"),
    ],
)
def test_a_pipe_client_is_refused_unless_its_token_is_this_users(
    users: _Users, refused: str | None
) -> None:
    from typing import cast

    from domi_desktop.frontdoor.rpc.peercred import WindowsUsers, pipe_client_refused

    found = pipe_client_refused(77, cast(WindowsUsers, users))
    if refused is None:
        assert found is None
    else:
        assert found is not None and found.startswith(refused)
