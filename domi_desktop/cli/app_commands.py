"""The commands that only talk to the running app (``status``, ``quit``, ``events``), and how
every command reaches it (``app_client``).

Kept light: with no app running, ``status`` is an interpreter start plus this, so nothing here
imports the store, the cron engine, ``json``, ``typing`` or ``datetime`` before it is needed. The
socket client (``json``, ``socket``, the peer check) is imported only once the app's socket exists
(``instance.app_socket``).
"""

from __future__ import annotations

import argparse
import sys

from domi_desktop.cli.exits import EXIT_NOT_RUNNING
from domi_desktop.frontdoor.rpc.socket_path import SocketDirError

TYPE_CHECKING = False  # typing.TYPE_CHECKING would load typing, 2 ms
if TYPE_CHECKING:
    from domi_desktop.frontdoor.rpc.client import RpcClient


def status(args: argparse.Namespace) -> int:
    client, reason = reach_app(args)
    if client is None:
        from domi_desktop.paths import resolve_data_dir

        data_dir = str(resolve_data_dir(args.data_dir))
        if args.json:
            import json

            shown = {"running": False, "data_dir": data_dir}
            if reason:
                shown = {"running": None, "unreachable": reason, "data_dir": data_dir}
            print(json.dumps(shown))
        elif reason:
            print(f"domi-desktop cannot be reached: {reason}")
        else:
            print(f"domi-desktop is not running (data dir {data_dir})")
        return EXIT_NOT_RUNNING
    try:
        state = client.call("app.status", {})
    finally:
        client.close()
    if args.json:
        import json

        print(json.dumps(state, ensure_ascii=False))
        return 0
    from domi_desktop.cli.render import when
    from domi_desktop.platform.timezone import install_os_zone

    install_os_zone()  # only now: the instants are shown in it, and --json needs none
    last = state["last_wake"] or {}
    print(f"domi-desktop {state['version']} running, pid {state['pid']}")
    print(f"  data dir   {state['data_dir']}")
    print(f"  socket     {state['socket']}")
    schedules = "-" if state["schedules"] is None else state["schedules"]
    print(f"  schedules  {schedules}, running runs {state['running_runs'] or 'none'}")
    print(f"  last wake  {when(last.get('at'))} ({last.get('reason', '-')})")
    print(f"  next wake  {when(state['next_wake'])}")
    wake = state.get("wake") or {}
    if wake.get("at"):
        print(f"  wakes the computer {when(wake['at'])}: {wake.get('alarm') or '-'}")
    problem = (state.get("store") or {}).get("problem")
    if problem:
        print(f"  store      {problem}")
    return 0


def quit(args: argparse.Namespace) -> int:
    client, reason = reach_app(args)
    if client is None:
        print(f"domi-desktop: {reason}" if reason else "domi-desktop is not running")
        return EXIT_NOT_RUNNING
    try:
        client.call("app.quit", {})
    finally:
        client.close()
    print("domi-desktop is stopping")
    return 0


def conditions(args: argparse.Namespace) -> int:
    # Qt is loaded here only: QNetworkInformation is the network reader.
    from domi_desktop.platform.conditions.__main__ import main as show_conditions

    return show_conditions([] if args.follow else ["--once"])


def events(args: argparse.Namespace) -> int:
    client, reason = reach_app(args)
    if client is None:
        print(f"domi-desktop: {reason or 'not running'}", file=sys.stderr)
        return EXIT_NOT_RUNNING
    import json

    from domi_desktop.frontdoor.rpc.protocol import EVENTS_CLOSED

    try:
        for event in client.events():
            if event["method"] == EVENTS_CLOSED:
                reason = event.get("params", {}).get("reason")
                print(f"domi-desktop: the app ended the event stream: {reason}", file=sys.stderr)
                return 1
            print(json.dumps({"event": event["method"], **event.get("params", {})}), flush=True)
            if not args.follow:
                break
    finally:
        client.close()
    return 0


def app_client(args: argparse.Namespace) -> RpcClient | None:
    """The running app's RPC client, if an instance runs for this data dir and can be reached.

    An app that cannot be reached (a socket directory refused as unsafe, an app that does not
    answer) is said in one line on stderr; schedule commands then use the database directly,
    which the app re-reads.
    """
    client, reason = reach_app(args)
    if reason is not None:
        print(f"domi-desktop: {reason}; using the database directly", file=sys.stderr)
    return client


def reach_app(args: argparse.Namespace) -> tuple[RpcClient | None, str | None]:
    """The running app's client; or None and why it cannot be reached, None when none runs."""
    from domi_desktop.frontdoor.rpc.instance import app_socket
    from domi_desktop.paths import resolve_data_dir

    try:
        name = app_socket(resolve_data_dir(args.data_dir))
    except SocketDirError as error:
        return None, str(error)
    if name is None:
        return None, None
    from domi_desktop.frontdoor.rpc.client import SilentApp, connect

    try:
        return connect(name), None
    except SilentApp as error:
        return None, str(error)
