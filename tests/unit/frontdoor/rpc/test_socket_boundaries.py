"""The socket's edges that need no daemon: path choice, private dir, Win32 calls (faked), relisten."""

from __future__ import annotations

import ctypes
import io
import os
import shutil
import socket
import tempfile
from pathlib import Path
from typing import Any, BinaryIO, cast

import pytest
from PySide6.QtCore import QCoreApplication

from domi_desktop.app.qtloop import QtLoop
from domi_desktop.frontdoor.rpc.client import Kernel32Peek, PipeTransport, RpcClient, open_pipe
from domi_desktop.frontdoor.rpc.peercred import PeerError, WindowsUsers, check_pipe_server
from domi_desktop.frontdoor.rpc.server import RpcServer
from domi_desktop.frontdoor.rpc.socket_path import SocketDirError, choose_socket_dir, private_dir

SUN_PATH_MAC = 103


def test_it_picks_a_short_dir_both_launchd_and_terminal_see_on_macos() -> None:
    # The old place: $TMPDIR (49 bytes on macOS) + domi-desktop-<user>: 85 + a long name.
    chosen = choose_socket_dir("darwin", 501, None)
    assert chosen == Path("/tmp/domi-501")
    socket_file = chosen / "domi-0123456789ab.sock"
    assert len(str(socket_file).encode()) <= 44 < SUN_PATH_MAC
    assert choose_socket_dir("darwin", 4294967294, "/run/user/x") == Path("/tmp/domi-4294967294")


def test_it_prefers_xdg_runtime_dir_on_linux_only_when_absolute() -> None:
    assert choose_socket_dir("linux", 1000, "/run/user/1000") == Path("/run/user/1000")
    assert choose_socket_dir("linux", 1000, "relative") == Path("/tmp/domi-1000")
    assert choose_socket_dir("linux", 1000, None) == Path("/tmp/domi-1000")


@pytest.mark.posix_only  # uids and mode bits
def test_it_refuses_a_socket_dir_not_private_to_us(tmp_path: Path) -> None:
    uid = os.getuid()
    mine = private_dir(tmp_path / "new", uid, create=True)
    assert (mine.stat().st_mode & 0o777) == 0o700
    (tmp_path / "open").mkdir(mode=0o755)
    (tmp_path / "open").chmod(0o755)
    with pytest.raises(SocketDirError, match="mode is 755, not 700"):
        private_dir(tmp_path / "open", uid, create=True)
    with pytest.raises(SocketDirError, match=f"belongs to uid {uid}, not to you"):
        private_dir(mine, uid + 1, create=False)
    (tmp_path / "link").symlink_to(mine)
    with pytest.raises(SocketDirError, match="not a directory"):
        private_dir(tmp_path / "link", uid, create=True)


# -- Windows, at the ctypes boundary -----------------------------------------------------------


def _out(pointer: Any) -> Any:
    """The ctypes object behind a ``byref``."""
    return pointer._obj


class FakeKernel32:
    def __init__(self, server_pid: int, *, fail: str = "") -> None:
        self.server_pid, self.fail, self.freed = server_pid, fail, 0
        self.closed: list[Any] = []
        self.waiting = 0

    def GetNamedPipeServerProcessId(self, handle: Any, pid: Any) -> int:
        assert isinstance(handle, ctypes.c_void_p) and handle.value == 77
        if self.fail == "pid":
            return 0
        _out(pid).value = self.server_pid
        return 1

    def GetCurrentProcess(self) -> int:
        return -1

    def OpenProcess(self, access: int, inherit: bool, pid: int) -> int:
        return 1000 + pid

    def CloseHandle(self, handle: Any) -> int:
        self.closed.append(handle)
        return 1

    def LocalFree(self, _memory: Any) -> None:
        self.freed += 1

    def GetLastError(self) -> int:
        return 5

    def PeekNamedPipe(self, handle: Any, *args: Any) -> int:
        if self.fail == "peek":
            return 0
        _out(args[3]).value = self.waiting
        return 1


class FakeAdvapi32:
    def __init__(self, sids: dict[int, str]) -> None:
        self.sids = sids
        self._buffers: dict[int, str] = {}

    def OpenProcessToken(self, process: int, access: int, token: Any) -> int:
        _out(token).value = 5000 + process + 1  # never 0 (NULL)
        self._token_process = process
        return 1

    def GetTokenInformation(
        self, token: Any, kind: int, buffer: Any, size: int, needed: Any
    ) -> int:
        if buffer is None:
            _out(needed).value = 16
            return 0
        sid = ctypes.create_unicode_buffer(self.sids[self._token_process])
        self._buffers[ctypes.addressof(sid)] = sid.value
        self._keep = sid
        ctypes.c_void_p.from_buffer(buffer).value = ctypes.addressof(sid)
        return 1

    def ConvertSidToStringSidW(self, sid: Any, text: Any) -> int:
        _out(text).value = self._buffers[sid.value]
        return 1


def users(server_pid: int, server_sid: str, *, fail: str = "") -> WindowsUsers:
    sids = {-1: "S-1-5-21-1-1001", 1000 + server_pid: server_sid}
    return WindowsUsers(FakeKernel32(server_pid, fail=fail), FakeAdvapi32(sids))


def test_it_accepts_a_pipe_served_by_our_own_user() -> None:
    check_pipe_server(77, r"\\.\pipe\x", users(4242, "S-1-5-21-1-1001"))


def test_it_refuses_a_pipe_served_by_another_user_naming_both() -> None:
    with pytest.raises(PeerError, match=r"pid 4242\) runs as S-1-5-21-1-666, not as you"):
        check_pipe_server(77, r"\\.\pipe\x", users(4242, "S-1-5-21-1-666"))


def test_it_refuses_a_pipe_whose_server_it_cannot_ask() -> None:
    with pytest.raises(PeerError, match="Windows error 5"):
        check_pipe_server(77, r"\\.\pipe\x", users(4242, "S-1", fail="pid"))


def test_a_pipe_peek_reports_bytes_waiting_and_a_closed_pipe() -> None:
    kernel32 = FakeKernel32(1)
    kernel32.waiting = 12
    assert Kernel32Peek(kernel32)(77) == 12
    kernel32.fail = "peek"
    with pytest.raises(BrokenPipeError):
        Kernel32Peek(kernel32)(77)


class FakePipeFile(io.RawIOBase):
    def __init__(self, incoming: bytes) -> None:
        self.incoming = bytearray(incoming)
        self.written = b""

    def readable(self) -> bool:
        return True

    def writable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        data = bytes(self.incoming[:size])
        del self.incoming[:size]
        return data

    def write(self, data: Any) -> int:
        self.written += bytes(data)
        return len(data)


def test_the_pipe_client_opens_checks_and_calls_over_a_file() -> None:
    answer = b'{"jsonrpc":"2.0","id":1,"result":{"protocol":1}}\n'
    file = FakePipeFile(answer)
    opened: list[str] = []
    checked: list[tuple[int, str]] = []

    def opener(path: str) -> Any:
        opened.append(path)
        return file

    transport = open_pipe(
        "domi-desktop-me-abc", opener=opener, handle_of=lambda _f: 77,
        peek=lambda _h: len(file.incoming), check=lambda h, p: checked.append((h, p)),
    )  # fmt: skip
    assert transport is not None
    assert opened == [r"\\.\pipe\domi-desktop-me-abc"]
    assert checked == [(77, r"\\.\pipe\domi-desktop-me-abc")]
    assert RpcClient(transport, "pipe").hello() == {"protocol": 1}
    assert b'"method": "app.hello"' in file.written and b'"protocol": 1' in file.written


def test_the_pipe_client_sends_nothing_to_a_pipe_of_another_user() -> None:
    file = FakePipeFile(b"")

    def refuse(_handle: int, path: str) -> None:
        raise PeerError(f"refusing to talk to {path}")

    with pytest.raises(PeerError):
        open_pipe("x", opener=lambda _p: file, handle_of=lambda _f: 1, peek=len, check=refuse)  # type: ignore[arg-type, return-value]
    assert file.written == b"" and file.closed


def test_no_pipe_means_no_app() -> None:
    def missing(path: str) -> Any:
        raise FileNotFoundError(path)

    assert open_pipe("x", opener=missing) is None


def test_a_pipe_read_times_out_and_sees_the_end() -> None:
    file = FakePipeFile(b"")
    transport = PipeTransport(cast(BinaryIO, file), 1, lambda _h: 0)
    assert transport.receive(0.01) is None

    def closed(_handle: int) -> int:
        raise BrokenPipeError

    assert PipeTransport(cast(BinaryIO, file), 1, closed).receive(1) == b""


# -- the listener ------------------------------------------------------------------------------


@pytest.mark.posix_only  # a socket file; a named pipe has none
def test_the_server_listens_again_when_its_socket_file_disappears(
    qapp: QCoreApplication, tmp_path: Path
) -> None:
    server = RpcServer({"ping": lambda _p: "pong"}, {}, QtLoop().call_soon)
    name = str(tmp_path / "s.sock")
    try:
        assert server.listen(name)
        assert server.ensure_listening()
        os.unlink(name)
        assert server.ensure_listening()
        assert Path(name).exists()
        with socket.socket(socket.AF_UNIX) as client:
            client.connect(name)
    finally:
        server.close()


@pytest.mark.posix_only  # a socket directory; Windows' pipes live in none
def test_the_server_makes_its_tmp_directory_again_when_a_cleaner_removed_it(
    qapp: QCoreApplication,
) -> None:
    # macOS's periodic cleaner removes what in /tmp was left untouched for three days.
    directory = Path(tempfile.mkdtemp(prefix="domi-test-", dir="/tmp"))
    name = str(directory / "s.sock")
    server = RpcServer({"ping": lambda _p: "pong"}, {}, QtLoop().call_soon)
    try:
        assert server.listen(name)
        shutil.rmtree(directory)
        assert server.ensure_listening()
        assert (directory.stat().st_mode & 0o777) == 0o700
        with socket.socket(socket.AF_UNIX) as client:
            client.connect(name)
    finally:
        server.close()
        shutil.rmtree(directory, ignore_errors=True)


def test_the_cli_loads_no_qt_no_peewee_and_no_service_to_say_no_app_runs(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = (
        "import sys; from domi_desktop.cli import main; "
        "code = main(['--data-dir', sys.argv[1], 'status']); "
        "print(sorted(m for m in sys.modules if m.startswith(('PySide6', 'peewee', "
        "'domi_desktop.frontdoor.service'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=60,
        env={k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"},
    )  # fmt: skip
    assert "is not running" in done.stdout, done.stderr
    loaded = done.stdout.splitlines()[-1]
    assert loaded == "[]"
