"""The commands that are not about editing schedules or talking to the app only: starting the
app, preview, simulate, runs, secrets."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime, tzinfo
from itertools import islice
from typing import TYPE_CHECKING, Any

from domi_desktop.cli.app_commands import app_client
from domi_desktop.cli.backend import backend, open_store
from domi_desktop.cli.render import emit, print_run_outcome, table, when
from domi_desktop.cli.windows import preview_windows
from domi_desktop.errors import UsageError
from domi_desktop.timefmt import with_offset

if TYPE_CHECKING:
    from domi_desktop.scheduler.simulate import Waited


def parse_instant(text: str, zone: tzinfo, option: str) -> datetime:
    """An ISO 8601 instant; without an offset it is read in ``zone``."""
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(
            f"{option}: {text!r} is not an ISO 8601 date-time (e.g. 2024-03-09T12:00:00-05:00)"
        ) from None
    return value if value.tzinfo is not None else value.replace(tzinfo=zone)


def start_app(args: argparse.Namespace) -> int:
    if args.headless:
        from domi_desktop.app.headless import run_headless

        return run_headless(args.data_dir)
    from domi_desktop.app.gui import run_tray

    return run_tray(args.data_dir)


def preview(args: argparse.Namespace) -> int:
    from domi_desktop.cron import describe, parse, upcoming, zone_for
    from domi_desktop.platform.timezone import local_zone_name

    if not 1 <= args.n <= 1000:
        raise UsageError(f"-n: {args.n} is out of range 1-1000")
    expr = parse(args.expr)
    zone = zone_for(args.tz)
    start = (
        parse_instant(args.after, zone, "--after")
        if args.after
        else datetime.now(zone).replace(second=0, microsecond=0)
    )
    fires = list(islice(upcoming(expr, start, zone), args.n))
    description = describe(expr, args.lang)
    windows = preview_windows(args, expr, zone, start)
    if args.json:
        document = {
            "expr": args.expr,
            "tz": args.tz,
            "description": description,
            "next": [fire.isoformat() for fire in fires],
        }
        if windows is not None:
            document["windows"] = [window.document for window in windows]
        print(json.dumps(document, ensure_ascii=False))
        return 0
    print(description)
    zone_label = args.tz if args.tz != "local" else f"local: {local_zone_name() or 'OS zone'}"
    print(f"\nNext {len(fires)} in {zone_label}:")
    for fire in fires:
        print("  " + with_offset(fire))
    os_zone = local_zone_name()
    if args.tz != "local" and os_zone and os_zone != args.tz:
        here = zone_for("local")
        if any(fire.utcoffset() != fire.astimezone(here).utcoffset() for fire in fires):
            print(f"\nThe same in your zone ({os_zone}):")
            for fire in fires:
                print("  " + with_offset(fire.astimezone(here)))
    if windows is not None:
        print(f"\nNext {len(windows)} windows ({args.window}, once per period):")
        for window in windows:
            print("  " + window.line)
    return 0


def simulate(args: argparse.Namespace) -> int:
    from domi_desktop.cron import next_run, prev_run, zone_for
    from domi_desktop.frontdoor.wire import check_values, parse_conditions
    from domi_desktop.model import Policies
    from domi_desktop.scheduler.simulate import simulate

    zone = zone_for(args.tz)
    last_due = parse_instant(args.last_due, zone, "--last-due")
    wakes = [parse_instant(text, zone, "--wake") for text in args.wake]
    # Checked as a schedule's conditions are: the same limits, the same words.
    given = {
        "volume": args.volume,
        "network_name": args.network_name,
        "path_exists": args.path_exists,
        "wait_at_most": args.wait_at_most,
        "on_deadline": args.on_deadline,
    }
    given = {name: value for name, value in given.items() if value is not None}
    check_values(given)
    conditions = parse_conditions(given)
    away = None if args.away_until is None else parse_instant(args.away_until, zone, "--away-until")
    policies = Policies(wake_to_run=args.wake_to_run, conditions=conditions)
    result = simulate(args.expr, args.tz, last_due, wakes, policies, away)
    if args.json:
        print(json.dumps({"wakes": [wake.to_json() for wake in result]}))
        return 0
    print(f"{args.expr} in {args.tz}, last fired for {last_due.astimezone(zone):%a %Y-%m-%d %H:%M}")
    fired_for: datetime | None = None
    for wake in result:
        at = f"{wake.at:%a %Y-%m-%d %H:%M:%S}"
        if not wake.fire:
            upcoming = next_run(args.expr, wake.at, zone)
            due = prev_run(args.expr, wake.at, zone)
            if due is not None and due == fired_for:
                line = f"  woke {at}: already fired for {due:%a %H:%M}, no fire"
            else:
                soon = f"{upcoming:%a %H:%M}" if upcoming else "never"
                line = f"  woke {at}: nothing due yet, no fire (next due {soon})"
        else:
            assert wake.due is not None
            fired_for = wake.due
            timing = "LATE (catch-up, runs once)" if wake.late else "on time"
            line = f"  woke {at}: fires for {wake.due:%a %H:%M}, {timing}"
            if wake.missed_count:
                listed = ", ".join(f"{m:%a %H:%M}" for m in wake.skipped[-5:])
                more = "" if wake.missed_count <= 5 else f" (the latest 5 of {wake.missed_count})"
                line += f"; {wake.missed_count} earlier skipped: {listed}{more}"
            if wake.waited is not None:
                line += "; " + _waited_words(wake.waited)
        print(line)
        if wake.wake_machine_at is not None:
            then = wake.wake_machine_at
            print(f"    then would wake the machine at {then:%H:%M:%S} ({then:%a %Y-%m-%d})")
    return 0


def _waited_words(waited: Waited) -> str:
    """ "waiting for the disk Backup until Wed 10:00, then runs once"."""
    from domi_desktop.scheduler.conditions import Verdict

    if waited.until is None:
        return f"{waited.reason}, past the last wake"
    until = f"{waited.reason} until {waited.until:%a %H:%M}"
    if waited.verdict is Verdict.run:
        return f"{until}, then runs once"
    return f"{until}: {waited.outcome}"


def runs(args: argparse.Namespace) -> int:
    params: dict[str, Any] = {"limit": args.limit}
    if args.schedule is not None:
        params["schedule_id"] = args.schedule
    if args.status is not None:
        params["status"] = args.status
    with backend(args) as api:
        runs = api.call("schedule.runs", params)
        schedules = {} if args.json else {s["id"]: s for s in api.call("schedule.list", {})}
    if args.json:
        print(json.dumps(runs, ensure_ascii=False))
        return 0
    if not runs:
        print("No runs.")
        return 0
    rows = []
    for run in runs:
        schedule = schedules.get(
            run["schedule_id"], {"name": str(run["schedule_id"]), "tz": "local"}
        )
        note = "you skipped it" if run["reason"] == "you_skipped" else run["reason"] or ""
        if run["missed_count"]:
            note = (note + f" {run['missed_count']} missed").strip()
        rows.append(
            (
                str(run["id"]),
                schedule["name"],
                when(run["due"], schedule["tz"]),
                when(run["started_at"], schedule["tz"]),
                run["status"],
                run["trigger"] + (" LATE" if run["late"] else ""),
                "" if run["exit_code"] is None else str(run["exit_code"]),
                note,
            )
        )
    table(("RUN", "SCHEDULE", "DUE", "STARTED", "STATUS", "TRIGGER", "EXIT", "NOTE"), rows)
    return 0


RUN_NOW_MARGIN = 60.0
"""Seconds ``run-now`` waits past the longest a run can take by its policies: starting the job and
recording its end, on a loaded machine."""


def run_wait(policies: dict[str, Any]) -> float | None:
    """How long ``run-now`` waits for the end of a run (``None``: as long as it runs).

    Each attempt may take the whole timeout, and a failed one is retried after a doubling backoff
    (``runtime.engine``); without a timeout the run has no end but its own.
    """
    timeout = policies.get("timeout")
    if timeout is None:
        return None
    retries = int(policies.get("retries") or 0)
    backoffs = float(policies.get("retry_backoff") or 0.0) * ((1 << retries) - 1)
    return (retries + 1) * float(timeout) + backoffs + RUN_NOW_MARGIN


def run_now(args: argparse.Namespace) -> int:
    from domi_desktop.frontdoor.wire import id_param

    id_param({"id": args.id})
    client = app_client(args)
    if client is not None:
        schedule = client.call("schedule.get", {"id": args.id})
        result = client.call(
            "schedule.run_now",
            {"id": args.id, "wait": True},
            timeout=run_wait(schedule["policies"]),
        )
        return print_run_outcome(args, result)
    from domi_desktop.clock import SystemClock
    from domi_desktop.frontdoor.wire import run_json
    from domi_desktop.runtime.jobs import run_here
    from domi_desktop.secrets import KeyringSecretStore

    with open_store(args) as store:
        run = run_here(store, args.id, SystemClock(), KeyringSecretStore())
        return print_run_outcome(args, run_json(run))


def _secrets() -> Any:
    from domi_desktop.secrets import KeyringSecretStore

    return KeyringSecretStore()


def secret_set(args: argparse.Namespace) -> int:
    import getpass

    if sys.stdin.isatty():
        value = getpass.getpass(f"Value for secret {args.name} (not shown): ")
    else:
        value = sys.stdin.read().removesuffix("\n")
    if not value:
        raise UsageError("the secret value is empty; nothing stored")
    _secrets().set(args.name, value)
    print(f"stored secret {args.name} in the OS keyring")
    return 0


def secret_list(args: argparse.Namespace) -> int:
    names = _secrets().names()
    return emit(args, names, lambda items: print("\n".join(items) if items else "No secrets."))


def secret_rm(args: argparse.Namespace) -> int:
    _secrets().delete(args.name)
    print(f"deleted secret {args.name}")
    return 0
