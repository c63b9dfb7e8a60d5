"""The app's log: a rotating file next to the database, and stderr when there is one."""

from __future__ import annotations

import logging
import logging.handlers
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from domi_desktop.scheduler.decide import WakePlan

log = logging.getLogger("domi_desktop")


def setup_logging(data_dir: Path) -> None:
    formatter = logging.Formatter("%(asctime)s %(levelname)s %(message)s")
    file = logging.handlers.RotatingFileHandler(
        data_dir / "domi-desktop.log", maxBytes=2_000_000, backupCount=2, encoding="utf-8"
    )
    handlers: list[logging.Handler] = [file]
    # A windowed Windows build has no stderr at all (sys.stderr is None): the file is the log.
    if sys.stderr is not None:
        handlers.append(logging.StreamHandler(sys.stderr))
    root = logging.getLogger()
    for handler in handlers:
        handler.setFormatter(formatter)
    root.handlers[:] = handlers
    root.setLevel(logging.INFO)


def log_wake(plan: WakePlan, reason: str) -> None:
    log.info(
        "wake (%s) at %s: %d fire(s), next wake %s",
        reason,
        plan.now.isoformat(timespec="seconds"),
        len(plan.fires),
        plan.next_wake.isoformat(timespec="seconds"),
    )
    for schedule_id, problem in plan.errors:
        log.warning("schedule %s cannot be evaluated: %s", schedule_id, problem)


def log_event(event: str, payload: Mapping[str, Any]) -> None:
    if event == "schedule.fire":
        kind = f"skipped ({payload['skipped']})" if payload["skipped"] else "fire"
        log.info(
            "%s: schedule %s %r run %s due %s trigger %s%s%s",
            kind,
            payload["schedule_id"],
            payload["name"],
            payload["run_id"],
            payload["due"],
            payload["trigger"],
            " LATE" if payload["late"] else "",
            f", {payload['missed_count']} missed" if payload["missed_count"] else "",
        )
    elif event == "run.finished":
        log.info(
            "finished: run %s of %r %s%s in %.1fs",
            payload["run_id"],
            payload["name"],
            payload["status"],
            f" ({payload['reason']})" if payload["reason"] else "",
            payload["duration"],
        )
