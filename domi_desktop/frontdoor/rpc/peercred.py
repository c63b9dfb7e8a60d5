"""Who is at the other end of the app's socket: the CLI talks only to its own user's app, and the
app answers only its own user's clients.

The socket directory is private, but a name can still be squatted (another user's process, a
copied socket, ``$XDG_RUNTIME_DIR`` pointing elsewhere), and a directory's mode can be changed
under a running app; so each side asks the kernel who is at the other end: ``SO_PEERCRED`` on
Linux, ``getpeereid`` on macOS and the BSDs, and on Windows the named pipe's other process
(``GetNamedPipeServerProcessId`` / ``GetNamedPipeClientProcessId``) and its token's user SID.
"""

from __future__ import annotations

import ctypes
import socket
import struct
import sys
from typing import Any

from domi_desktop.errors import DomiError
from domi_desktop.ffi import Signature, load_c, load_windows


class PeerError(DomiError):
    """The socket's other end is not this user's, or cannot be asked."""


def check_unix_peer(sock: socket.socket, name: str) -> None:
    """Raise ``PeerError`` unless the process at the other end of ``sock`` runs as us."""
    try:
        uid = peer_uid(sock)
    except OSError as error:
        raise PeerError(f"cannot tell who listens on {name}: {error}") from None
    mine = _my_uid()
    if uid != mine:
        raise PeerError(
            f"refusing to talk to {name}: it belongs to uid {uid}, not to you (uid {mine}); "
            "another user's process holds the app's socket name"
        )


def unix_client_refused(descriptor: int) -> str | None:
    """Why the client connected on ``descriptor`` is refused (another user's, or unknown);
    None when it runs as us. The descriptor stays open."""
    sock = socket.socket(fileno=descriptor)
    try:
        uid = peer_uid(sock)
    except OSError as error:
        return f"a client nobody can vouch for ({error})"
    finally:
        sock.detach()
    mine = _my_uid()
    return None if uid == mine else f"a client of uid {uid}, not of this user (uid {mine})"


def _my_uid() -> int:
    if sys.platform == "win32":
        raise PeerError("Windows has no uids: use check_pipe_server")
    import os

    return os.getuid()


def peer_uid(sock: socket.socket) -> int:
    if sys.platform == "win32":
        raise PeerError("Windows has no Unix peer credentials: use check_pipe_server")
    if sys.platform == "linux":
        # struct ucred { pid_t pid; uid_t uid; gid_t gid; }
        size = struct.calcsize("iII")
        _pid, uid, _gid = struct.unpack(
            "iII", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, size)
        )
        return int(uid)
    import ctypes.util  # loads subprocess: only where getpeereid is the way

    uint32_p = ctypes.POINTER(ctypes.c_uint32)
    libc = load_c(
        ctypes.util.find_library("c"),
        {"getpeereid": ((ctypes.c_int, uint32_p, uint32_p), ctypes.c_int)},
        use_errno=True,
    )
    uid, gid = ctypes.c_uint32(), ctypes.c_uint32()
    if libc.getpeereid(sock.fileno(), ctypes.byref(uid), ctypes.byref(gid)) != 0:
        number = ctypes.get_errno()
        raise OSError(number, f"getpeereid failed (errno {number})")
    return uid.value


# -- Windows -----------------------------------------------------------------------------------

PROCESS_QUERY_LIMITED_INFORMATION = 0x1000
TOKEN_QUERY = 0x0008
TOKEN_USER_CLASS = 1


class WindowsUsers:
    """The Win32 calls behind the check, over ``kernel32``/``advapi32`` (fakes in tests)."""

    def __init__(self, kernel32: Any, advapi32: Any) -> None:
        self._kernel32 = kernel32
        self._advapi32 = advapi32

    def pipe_server_pid(self, handle: int) -> int:
        pid = ctypes.c_ulong()
        if not self._kernel32.GetNamedPipeServerProcessId(
            ctypes.c_void_p(handle), ctypes.byref(pid)
        ):
            self._fail("GetNamedPipeServerProcessId")
        return pid.value

    def pipe_client_pid(self, handle: int) -> int:
        pid = ctypes.c_ulong()
        if not self._kernel32.GetNamedPipeClientProcessId(
            ctypes.c_void_p(handle), ctypes.byref(pid)
        ):
            self._fail("GetNamedPipeClientProcessId")
        return pid.value

    def close(self, handle: int) -> None:
        self._kernel32.CloseHandle(ctypes.c_void_p(handle))

    def user_sid(self, pid: int | None) -> str:
        """The string SID of the user running ``pid`` (``None``: this process)."""
        if pid is None:
            process = self._kernel32.GetCurrentProcess()
        else:
            process = self._kernel32.OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, False, pid)
            if not process:
                self._fail("OpenProcess")
        try:
            return self._token_sid(process)
        finally:
            if pid is not None:
                self._kernel32.CloseHandle(process)

    def _token_sid(self, process: Any) -> str:
        token = ctypes.c_void_p()
        if not self._advapi32.OpenProcessToken(process, TOKEN_QUERY, ctypes.byref(token)):
            self._fail("OpenProcessToken")
        try:
            needed = ctypes.c_ulong()
            self._advapi32.GetTokenInformation(
                token, TOKEN_USER_CLASS, None, 0, ctypes.byref(needed)
            )
            buffer = ctypes.create_string_buffer(max(needed.value, ctypes.sizeof(ctypes.c_void_p)))
            if not self._advapi32.GetTokenInformation(
                token, TOKEN_USER_CLASS, buffer, needed.value, ctypes.byref(needed)
            ):
                self._fail("GetTokenInformation")
            # TOKEN_USER starts with SID_AND_ATTRIBUTES, whose first field is the PSID.
            sid = ctypes.c_void_p.from_buffer(buffer)
            text = ctypes.c_wchar_p()
            if not self._advapi32.ConvertSidToStringSidW(sid, ctypes.byref(text)):
                self._fail("ConvertSidToStringSidW")
            try:
                return str(text.value)
            finally:
                self._kernel32.LocalFree(text)
        finally:
            self._kernel32.CloseHandle(token)

    def _fail(self, function: str) -> None:
        code = int(self._kernel32.GetLastError())
        raise OSError(code, f"{function} failed (Windows error {code})")


# Handles are pointer-sized: undeclared, ctypes cut GetCurrentProcess()'s pseudo-handle to a
# 32-bit int and OpenProcessToken refused it (error 6), so the CLI never reached the app.
HANDLE, DWORD, BOOL = ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int32
KERNEL32: dict[str, Signature] = {
    "GetNamedPipeServerProcessId": ((HANDLE, ctypes.POINTER(ctypes.c_ulong)), BOOL),
    "GetNamedPipeClientProcessId": ((HANDLE, ctypes.POINTER(ctypes.c_ulong)), BOOL),
    "GetCurrentProcess": ((), HANDLE),
    "OpenProcess": ((DWORD, BOOL, DWORD), HANDLE),
    "CloseHandle": ((HANDLE,), BOOL),
    "LocalFree": ((ctypes.c_void_p,), ctypes.c_void_p),
    "GetLastError": ((), DWORD),
}
ADVAPI32: dict[str, Signature] = {
    "OpenProcessToken": ((HANDLE, DWORD, ctypes.POINTER(ctypes.c_void_p)), BOOL),
    "GetTokenInformation": (
        (HANDLE, ctypes.c_int, ctypes.c_void_p, DWORD, ctypes.POINTER(ctypes.c_ulong)),
        BOOL,
    ),
    "ConvertSidToStringSidW": ((ctypes.c_void_p, ctypes.POINTER(ctypes.c_wchar_p)), BOOL),
}


def windows_users() -> WindowsUsers:
    if sys.platform != "win32":
        raise PeerError("named pipe servers are a Windows thing")
    return WindowsUsers(load_windows("kernel32", KERNEL32), load_windows("advapi32", ADVAPI32))


def check_pipe_server(handle: int, name: str, users: WindowsUsers) -> None:
    """Raise ``PeerError`` unless the pipe ``handle`` was created by a process of this user."""
    try:
        pid = users.pipe_server_pid(handle)
        theirs = users.user_sid(pid)
        mine = users.user_sid(None)
    except OSError as error:
        raise PeerError(f"cannot tell who serves {name}: {error}") from None
    if theirs != mine:
        raise PeerError(
            f"refusing to talk to {name}: its server (pid {pid}) runs as {theirs}, not as you "
            f"({mine}); another user's process holds the app's pipe name"
        )


def pipe_client_refused(handle: int, users: WindowsUsers) -> str | None:
    """Why the client of the pipe instance ``handle`` is refused (another user's, or unknown);
    None when its process's token is this user's."""
    try:
        pid = users.pipe_client_pid(handle)
        theirs = users.user_sid(pid)
        mine = users.user_sid(None)
    except OSError as error:
        return f"a client nobody can vouch for ({error})"
    return None if theirs == mine else f"a client (pid {pid}) of {theirs}, not of this user"
