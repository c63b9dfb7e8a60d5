"""``domi-desktop monitor``: what this machine tells its monitors, read from its data folder
(the app need not run): the pings still waiting to be sent, the checks domi made, the heartbeat."""

from __future__ import annotations

import argparse
import json
from typing import Any

from domi_desktop.frontdoor.settings import load_settings, settings_path
from domi_desktop.monitor.spool import SPOOL_FILENAME, Spool
from domi_desktop.monitor.transport import CHECKS_FILENAME, CheckBook
from domi_desktop.paths import resolve_data_dir


def monitor(args: argparse.Namespace) -> int:
    data = resolve_data_dir(args.data_dir)
    waiting = Spool(data / SPOOL_FILENAME).items
    checks = CheckBook(data / CHECKS_FILENAME).known()
    settings = load_settings(settings_path(data))
    report: dict[str, Any] = {
        "waiting": [
            {"kind": i.kind.value, "signal": i.signal, "what": i.what, "rid": i.rid}
            for i in waiting
        ],
        "checks": [
            {
                "api": key.split(" ", 1)[0],
                "name": k.spec["name"],
                "uuid": k.uuid,
                "schedule": k.spec.get("schedule"),
                "tz": k.spec.get("tz"),
                "timeout": k.spec.get("timeout"),
                "grace": k.spec["grace"],
            }
            for key, k in sorted(checks.items())
        ],
        "heartbeat": {
            "healthchecks_key": settings.healthchecks_key or None,
            "healthchecks_api": settings.healthchecks_api or None,
            "ping_url": bool(settings.heartbeat_url),
            "hours": settings.heartbeat_hours,
        },
    }
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
        return 0
    print(f"waiting to be sent: {len(waiting)}" + (
        f" (the oldest: {waiting[0].what or waiting[0].kind.value} "
        f"{waiting[0].signal or waiting[0].kind.value})" if waiting else ""
    ))  # fmt: skip
    for check in report["checks"]:
        when = check["schedule"] and f"{check['schedule']} {check['tz']}"
        print(f"check {check['name']!r} ({when or str(check['timeout']) + ' s'}, "
              f"grace {check['grace']} s) at {check['api']}")  # fmt: skip
    beat = report["heartbeat"]
    if beat["healthchecks_key"] or beat["ping_url"]:
        print(f"heartbeat: down after {beat['hours']} h of silence")
    else:
        print("heartbeat: none (Settings, or healthchecks_key in settings.json)")
    return 0
