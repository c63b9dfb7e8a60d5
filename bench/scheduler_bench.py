"""The scheduler's wake over many schedules, side by side with APScheduler 3's coalescing.

Measures, for N schedules of mixed expressions and zones (no database, the pure decision):
  1. an idle wake: nothing is due (the timer's tick between fires);
  2. the catch-up decision after 3 days asleep: every schedule owes one late fire, its skipped
     dues counted (the 100 listed ones are computed when the store writes them; timed apart);
  3. the same catch-up with APScheduler 3: each job's run times up to now from its CronTrigger,
     as its scheduler does before coalescing them into one run.
Usage: python bench/scheduler_bench.py --schedules N [--json] [--repeat R]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from apscheduler.triggers.cron import CronTrigger

from domi_desktop.cron import prev_run
from domi_desktop.model import CommandAction, Schedule
from domi_desktop.scheduler.decide import Planner

# Weekdays by name: APScheduler 3's from_crontab reads a numeric day of week with 0 = Monday,
# and it ANDs day of month with day of week; these expressions mean the same to both.
EXPRESSIONS = [
    "0 9 * * *",
    "0 9 * * mon-fri",
    "30 2 * * *",
    "0 * * * *",
    "*/15 * * * *",
    "*/5 * * * *",
    "0 0 * * sun",
    "0 12 1 * *",
    "15,45 9-17 * * mon-fri",
    "0 0 1,15 * *",
]
ZONES = ["UTC", "Europe/Riga", "America/New_York", "Asia/Shanghai", "Australia/Lord_Howe"]
NOW = datetime(2024, 6, 5, 10, 0, 30, tzinfo=UTC)
ASLEEP = timedelta(days=3)


def make_schedules(count: int, *, asleep: bool) -> list[Schedule]:
    rng = random.Random(7)
    schedules = []
    for i in range(count):
        expr, tz = rng.choice(EXPRESSIONS), rng.choice(ZONES)
        at = NOW - ASLEEP if asleep else NOW
        last_due = prev_run(expr, at, tz)
        schedules.append(
            Schedule(id=i + 1, name=f"job {i}", expr=expr, tz=tz,
                     action=CommandAction(argv=("true",)), last_due=last_due)
        )  # fmt: skip
    return schedules


def best_ms(work: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        began = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - began)
    return best * 1000


def apscheduler_catchup(schedules: list[Schedule]) -> int:
    """APScheduler 3: ``Job._get_run_times(now)`` for every job, then coalesce to the last."""
    fired = 0
    for schedule in schedules:
        trigger = CronTrigger.from_crontab(schedule.expr, timezone=ZoneInfo(schedule.tz))
        assert schedule.last_due is not None
        run_times = []
        next_run_time = trigger.get_next_fire_time(None, schedule.last_due + timedelta(seconds=1))
        while next_run_time and next_run_time <= NOW:
            run_times.append(next_run_time)
            next_run_time = trigger.get_next_fire_time(next_run_time, NOW)
        if run_times:
            fired += 1
    return fired


def main() -> int:
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--schedules", type=int, default=10_000)
    options.add_argument("--repeat", type=int, default=3)
    options.add_argument("--json", action="store_true")
    args = options.parse_args()
    n = args.schedules

    idle_planner = Planner(make_schedules(n, asleep=False))
    idle = best_ms(lambda: idle_planner.plan(NOW + timedelta(seconds=1)), args.repeat)
    assert idle_planner.plan(NOW + timedelta(seconds=1)).fires == ()

    asleep = make_schedules(n, asleep=True)
    planner = Planner(asleep)
    catchup = best_ms(lambda: planner.plan(NOW), args.repeat)
    fires = planner.plan(NOW).fires
    assert fires, "3 days asleep owe fires"
    listing = best_ms(lambda: [fire.skipped() for fire in fires], 1)
    build = best_ms(lambda: Planner(asleep), 1)

    theirs = best_ms(lambda: apscheduler_catchup(asleep), 1)
    assert apscheduler_catchup(asleep[:500]) == sum(1 for f in fires if f.schedule_id <= 500)

    result = {
        "schedules": n,
        "catchup_fires": len(fires),
        "idle_wake_ms": round(idle, 2),
        "catchup_wake_ms": round(catchup, 1),
        "apscheduler_catchup_ms": round(theirs, 1),
        "catchup_vs_apscheduler": round(theirs / catchup, 1),
        "listing_skipped_ms": round(listing, 1),
        "planner_build_ms": round(build, 1),
    }
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"{n} schedules, {len(EXPRESSIONS)} expressions x {len(ZONES)} zones")
    print(f"  idle wake (nothing due)            {idle:9.2f} ms   (target <= 5 ms)")
    print(
        f"  catch-up after 3 days asleep       {catchup:9.1f} ms   (target <= 300 ms; {len(fires)} fire)"
    )
    print(
        f"  same with APScheduler 3 coalescing {theirs:9.1f} ms   ({theirs / catchup:.1f}x slower)"
    )
    print(f"  listing the <=100 skipped dues     {listing:9.1f} ms   (done by the store's claim)")
    print(f"  building the planner (start-up)    {build:9.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
