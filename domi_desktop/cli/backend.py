"""Where schedule commands go: the running app over its socket, else the store opened here."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol

from domi_desktop.cli.app_commands import app_client

if TYPE_CHECKING:
    from domi_desktop.store import Store


class Backend(Protocol):
    def call(self, method: str, params: dict[str, Any]) -> Any: ...


class DirectBackend:
    """No app runs: the service over the store, opened for this command only."""

    def __init__(self, store: Store) -> None:
        from domi_desktop.clock import SystemClock
        from domi_desktop.frontdoor.service import Service

        self.store = store
        self.service = Service(store, SystemClock())

    def call(self, method: str, params: dict[str, Any]) -> Any:
        from domi_desktop.frontdoor.service import METHODS
        from domi_desktop.frontdoor.wire import check_values

        # The text as the app's dispatcher checks it; the CLI's numbers (ids, limits) are named
        # by the service in words of their own ("is not an id").
        check_values(params, numbers=False)
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
