"""``domi-desktop store migrate``: copy a store into another, SQLite file ↔ shared PostgreSQL;
``store restore``: put a backup of the SQLite file back."""

from __future__ import annotations

import argparse
import os

from domi_desktop.errors import UsageError

SQLITE = "sqlite"


def apply_globals(args: argparse.Namespace) -> None:
    """``--store`` and ``--machine`` become the environment every later open reads (the app, its
    store worker, the commands), so they mean the same wherever a store is opened. Called only
    when one is given: ``status`` and friends load no database code."""
    store, machine = args.store, args.machine
    from domi_desktop.store.backend import MACHINE_ENV, STORE_ENV, machine_name, resolve_url

    if store is not None:
        resolve_url(store)  # a bad URL is refused before anything starts
        os.environ[STORE_ENV] = store
    if machine is not None:
        os.environ[MACHINE_ENV] = machine_name(machine)


def migrate(args: argparse.Namespace) -> int:
    """Copy the store named by ``--from`` (default: this one) into ``--to`` (default: this one).
    This one is ``--store``/``DOMI_STORE``, else the SQLite file of the data dir."""
    from domi_desktop.clock import SystemClock
    from domi_desktop.store import Store
    from domi_desktop.store.backend import hide_password, resolve_url

    if args.source is None and args.target is None:
        raise UsageError("store migrate needs --to URL or --from URL (sqlite: the data dir's file)")
    here = resolve_url(None)
    source = here if args.source is None else _url(args.source)
    target = here if args.target is None else _url(args.target)
    if source == target:
        raise UsageError("store migrate: the source and the target are the same store")
    now = SystemClock().now()
    with Store.open(args.data_dir, now=now, url=source or SQLITE) as store:
        snapshot = store.dump()
        source_label = store.location
    with Store.open(args.data_dir, now=now, url=target or SQLITE) as store:
        store.load(snapshot, replace=args.force)
        target_label = store.location
    print(
        f"copied {snapshot.schedules} schedules and {snapshot.runs} runs "
        f"from {hide_password(source_label)} to {hide_password(target_label)}"
    )
    return 0


def restore(args: argparse.Namespace) -> int:
    """Put the backup ``FILE`` in place of the data dir's database, the current one kept aside."""
    from pathlib import Path

    from domi_desktop.clock import SystemClock
    from domi_desktop.store.backend import resolve_url
    from domi_desktop.store.restore import restore as put_back

    if resolve_url(None) is not None:
        raise UsageError(
            "store restore puts back a SQLite file; a shared store has its own backups"
        )
    from domi_desktop.cli.render import printable
    from domi_desktop.errors import StoreError

    try:
        restored = put_back(args.data_dir, Path(args.file), now=SystemClock().now())
    except StoreError as error:
        raise StoreError(f"cannot restore {printable(args.file)}: {error}") from None
    print(f"restored {restored.schedules} schedule(s) from {printable(args.file)}; the database "
          f"as it was is kept as {printable(restored.kept)}")  # fmt: skip
    return 0


def _url(value: str) -> str | None:
    from domi_desktop.store.backend import resolve_url

    return resolve_url(value)
