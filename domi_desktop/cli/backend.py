"""Where schedule commands go: the running app over its socket, else the store opened here."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol

from domi_desktop.app.socket_path import SocketDirError

if TYPE_CHECKING:
    from domi_desktop.app.rpc_client import RpcClient
    from domi_desktop.store import Store


class Backend(Protocol):
    def call(self, method: str, params: dict[str, Any]) -> Any: ...


class DirectBackend:
    """No app runs: the service over the store, opened for this command only."""

    def __init__(self, store: Store) -> None:
        from domi_desktop.api.service import Service
        from domi_desktop.clock import SystemClock

        self.store = store
        self.service = Service(store, SystemClock())

    def call(self, method: str, params: dict[str, Any]) -> Any:
        from domi_desktop.api.service import METHODS

        return METHODS[method](self.service, params)


@contextmanager
def open_store(args: argparse.Namespace) -> Iterator[Store]:
    from domi_desktop.clock import SystemClock
    from domi_desktop.store import Store

    store = Store.open(args.data_dir, now=SystemClock().now())
    try:
        yield store
    finally:
        store.close()


@contextmanager
def backend(args: argparse.Namespace) -> Iterator[Backend]:
    client = app_client(args)
    if client is not None:
        try:
            yield client
        finally:
            client.close()
        return
    with open_store(args) as store:
        yield DirectBackend(store)


def app_client(args: argparse.Namespace) -> RpcClient | None:
    """The running app's RPC client, if an instance runs for this data dir and can be reached.

    A socket directory refused as unsafe (another user's, mode 0777, a link) is said in one line
    on stderr; schedule commands then use the database directly, which the app re-reads.
    """
    from domi_desktop.app.rpc_client import connect_to_app

    try:
        return connect_to_app(args.data_dir)
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
