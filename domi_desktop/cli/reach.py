"""Reaching the running app from the CLI: light, because ``status`` with no app is mostly this.

The socket client (``json``, ``socket``, ``typing``, the peer check) is imported only once the
app's socket exists (``instance.app_socket``).
"""

from __future__ import annotations

import argparse
import sys

from domi_desktop.app.socket_path import SocketDirError

TYPE_CHECKING = False  # typing.TYPE_CHECKING would load typing, 2 ms
if TYPE_CHECKING:
    from domi_desktop.app.rpc_client import RpcClient


def app_client(args: argparse.Namespace) -> RpcClient | None:
    """The running app's RPC client, if an instance runs for this data dir and can be reached.

    A socket directory refused as unsafe (another user's, mode 0777, a link) is said in one line
    on stderr; schedule commands then use the database directly, which the app re-reads.
    """
    from domi_desktop.app.instance import app_socket
    from domi_desktop.paths import resolve_data_dir

    try:
        name = app_socket(resolve_data_dir(args.data_dir))
        if name is None:
            return None
        from domi_desktop.app.rpc_client import connect

        return connect(name)
    except SocketDirError as error:
        print(f"domi-desktop: {error}; using the database directly", file=sys.stderr)
        return None


def unreachable_reason() -> str | None:
    """Why no app can be reached whatever runs: the socket directory is refused; else None."""
    if sys.platform == "win32":
        return None
    from domi_desktop.app.socket_path import socket_dir

    try:
        socket_dir()
    except SocketDirError as error:
        return str(error)
    return None
