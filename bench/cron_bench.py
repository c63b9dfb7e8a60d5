"""next_run speed side by side with cronsim and croniter, in one process.

Each expression is iterated 10,000 steps (in chunks of 1,000 from the same start so that
'0 0 29 2 *' stays inside datetime's calendar), best of several repeats, and printed as µs per
step with the ratio to the faster peer. Usage: python bench/cron_bench.py [--json] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from croniter import croniter
from cronsim import CronSim

from domi_desktop.cron import next_run, parse

CASES = [
    ("*/5 * * * *", "UTC"),
    ("*/5 * * * *", "America/New_York"),
    ("0 9 * * 1-5", "America/New_York"),
    ("0 0 29 2 *", "UTC"),
    ("30 2 * * *", "America/New_York"),
    ("0 0 13 * 5", "UTC"),
    ("*/15 * * * *", "Australia/Lord_Howe"),
]
STEPS, CHUNK = 10_000, 1_000

Stepper = Callable[[str, str, datetime], None]


def ours(expr: str, tz: str, start: datetime) -> None:
    parsed, zone, cursor = parse(expr), ZoneInfo(tz), start
    for _ in range(CHUNK):
        cursor = next_run(parsed, cursor, zone)  # type: ignore[assignment]


def with_cronsim(expr: str, tz: str, start: datetime) -> None:
    iterator = CronSim(expr, start)
    for _ in range(CHUNK):
        next(iterator)


def with_croniter(expr: str, tz: str, start: datetime) -> None:
    iterator = croniter(expr, start)
    for _ in range(CHUNK):
        iterator.get_next(datetime)


def time_per_step(stepper: Stepper, expr: str, tz: str, repeat: int) -> float:
    start = datetime(2024, 1, 1, tzinfo=ZoneInfo(tz))
    best = float("inf")
    for _ in range(repeat):
        began = time.perf_counter()
        for _ in range(STEPS // CHUNK):
            stepper(expr, tz, start)
        best = min(best, time.perf_counter() - began)
    return best / STEPS * 1e6


def main() -> int:
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--json", action="store_true")
    options.add_argument("--repeat", type=int, default=3)
    args = options.parse_args()
    rows = []
    for expr, tz in CASES:
        mine = time_per_step(ours, expr, tz, args.repeat)
        sim = time_per_step(with_cronsim, expr, tz, args.repeat)
        iter_ = time_per_step(with_croniter, expr, tz, args.repeat)
        rows.append(
            {
                "expr": expr,
                "tz": tz,
                "domi_us": round(mine, 2),
                "cronsim_us": round(sim, 2),
                "croniter_us": round(iter_, 2),
                "speedup_vs_faster_peer": round(min(sim, iter_) / mine, 2),
            }
        )
    if args.json:
        print(json.dumps(rows))
        return 0
    print(f"{'expression':<16}{'zone':<21}{'domi':>8}{'cronsim':>9}{'croniter':>10}{'ratio':>8}")
    for row in rows:
        print(
            f"{row['expr']:<16}{row['tz']:<21}{row['domi_us']:>8.2f}{row['cronsim_us']:>9.2f}"
            f"{row['croniter_us']:>10.2f}{row['speedup_vs_faster_peer']:>7.1f}x"
        )
    print("µs per next-fire step, best of", args.repeat, "runs of", STEPS, "steps")
    slowest = min(row["speedup_vs_faster_peer"] for row in rows)  # type: ignore[type-var]
    print(f"worst ratio to the faster peer: {slowest:.1f}x (target >= 2x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
