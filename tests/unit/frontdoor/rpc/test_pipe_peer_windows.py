"""The peer check and the pipe peek against the real Win32 API: a pipe this process serves."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from domi_desktop.frontdoor.rpc.client import _kernel32_peek
from domi_desktop.frontdoor.rpc.peercred import check_pipe_server, windows_users

pytestmark = pytest.mark.windows_only
PIPE_TYPE_BYTE = PIPE_READMODE_BYTE = 0  # winbase.h; _winapi names only the message modes


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    """(server handle, client handle) of a fresh byte pipe served by this process."""
    import _winapi
    import msvcrt

    name = rf"\\.\pipe\domi-peer-test-{os.getpid()}"
    server = _winapi.CreateNamedPipe(
        name,
        _winapi.PIPE_ACCESS_DUPLEX,
        PIPE_TYPE_BYTE | PIPE_READMODE_BYTE | _winapi.PIPE_WAIT,
        1,
        4096,
        4096,
        0,
        _winapi.NULL,
    )
    try:
        with open(name, "r+b", buffering=0) as client:
            yield server, msvcrt.get_osfhandle(client.fileno())
    finally:
        _winapi.CloseHandle(server)


def test_our_own_token_has_a_user_sid() -> None:
    # Undeclared, GetCurrentProcess()'s pseudo-handle came back cut to 32 bits and
    # OpenProcessToken failed with error 6: every CLI command to the app exited 2.
    assert windows_users().user_sid(None).startswith("S-1-5-")


def test_a_pipe_we_serve_passes_the_peer_check(pipe: tuple[int, int]) -> None:
    _server, client = pipe
    users = windows_users()
    assert users.pipe_server_pid(client) == os.getpid()
    assert users.user_sid(os.getpid()) == users.user_sid(None)
    check_pipe_server(client, "the test pipe", users)


def test_peek_counts_what_waits_in_the_pipe(pipe: tuple[int, int]) -> None:
    import _winapi

    server, client = pipe
    peek = _kernel32_peek()
    assert peek(client) == 0
    _winapi.WriteFile(server, b"hello")
    assert peek(client) == 5
