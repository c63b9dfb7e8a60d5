"""The headless app across real S3 suspends of a QEMU guest (no logind there), each
case asserted from the guest's own database through the app's CLI (``runs --json``).

One guest for the module (``lab``); each test adds its own schedules and disables them at its end.
The guest's clock is UTC and every schedule is in UTC.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from datetime import UTC, datetime
from typing import Any

import pytest

from tests.sleeplab.vm import Lab, clear_of_a_minute, cron_at, epoch, iso, minute_at, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.sleeplab, pytest.mark.linux_only]

RESUME_NOTICED = 20.0
"""Seconds after the resume by which a catch-up must have fired: the issue's figure is 2 s (the
lab measures well under it), asserted with room for a loaded CI machine; without the kernel's
resume signal it came at the next minute's tick, 40 s late, which this still tells apart."""


def finished(lab: Lab, schedule_id: int, count: int) -> list[dict[str, Any]] | None:
    """The schedule's runs once ``count`` of them have ended (run or skipped); else None."""
    runs = lab.runs(schedule_id)
    done = [r for r in runs if r["status"] not in ("running", "waiting", "queued")]
    return runs if len(done) >= count and len(done) == len(runs) else None


def one_row_per_due(runs: list[dict[str, Any]]) -> None:
    doubled = {due: n for due, n in Counter(r["due"] for r in runs).items() if n > 1}
    assert not doubled, f"dues with more than one row: {doubled}"


def test_a_minute_job_and_a_daily_job_due_in_a_3_minute_sleep_each_run_once_at_the_resume(
    lab: Lab,
) -> None:
    minutely = lab.add("every minute", "* * * * *", "date +%s")
    daily_due = minute_at(lab.now(), 0, lead=45)  # within the sleep that begins after the adds
    daily = lab.add("daily", cron_at(daily_due), "date +%s")
    clear_of_a_minute(lab)

    slept = lab.suspend(180)

    assert 170 < slept.slept < 190, slept  # a real S3: the monotonic clock stood still
    assert slept.suspended < daily_due, "the daily job was added too late for the sleep"
    resumed = slept.resumed
    minute_dues = list(range(math.ceil(slept.suspended / 60) * 60, int(resumed) + 1, 60))
    assert len(minute_dues) == 3, minute_dues
    # After the resume: the daily run has ended, and the minute job's next due has run too (the
    # driver's old timer, armed before the sleep, must not fire any due a second time).
    next_due = minute_dues[-1] + 60
    wait_for(lambda: lab.now() > next_due + 5, 90, "the next minute", every=5)
    runs = wait_for(lambda: finished(lab, minutely, 0), 60, "the minute job's runs at rest")
    daily_runs = lab.runs(daily)
    lab.cli("schedule", "disable", str(minutely))
    lab.cli("schedule", "disable", str(daily))

    # The daily job: one run, late, a catch-up, fired within 2 s of the resume.
    (run,) = daily_runs
    assert run["due"] == iso(daily_due)
    assert run["status"] == "succeeded" and run["late"] and run["trigger"] == "catch_up", run
    assert run["missed_count"] == 0
    assert epoch(run["fired_at"]) - resumed <= RESUME_NOTICED, (run, resumed)

    # The minute job: of the three dues asleep, the latest runs once at the resume (within the
    # 60 s grace of its due, so on time by the README's rule: a `* * * * *` job cannot be late),
    # the two before it are recorded skipped as missed; the next due runs on time, once.
    one_row_per_due(runs)
    by_due = {epoch(r["due"]): r for r in runs}
    caught = by_due[minute_dues[-1]]
    assert caught["status"] == "succeeded" and caught["missed_count"] == 2, caught
    assert epoch(caught["fired_at"]) - resumed <= RESUME_NOTICED, (caught, resumed)
    assert caught["late"] == (resumed - minute_dues[-1] > 60)
    for due in minute_dues[:-1]:
        assert by_due[due]["status"] == "skipped" and by_due[due]["reason"] == "missed"
    after = by_due[next_due]
    assert after["status"] == "succeeded" and not after["late"] and after["trigger"] == "scheduled"
    assert epoch(after["fired_at"]) - next_due < RESUME_NOTICED, after
    before = [due for due in by_due if due < minute_dues[0]]
    expected = sorted([*before, *minute_dues, next_due])
    assert sorted(by_due) == expected, "a due with no row (lost) or a row with no due"


def test_jobs_running_across_a_sleep_end_once_and_their_timeout_counts_awake_time(
    lab: Lab,
) -> None:
    """README: ``timeout`` kills the whole process tree (status ``timed_out``). It counts the time
    the machine is awake (the supervisor's deadline is on the monotonic clock, which stops in
    S3): a job asleep for longer than its timeout is not killed for that at the resume."""
    due = minute_at(lab.now(), 0, lead=60)
    marks = "date +%s; sleep {}; date +%s"
    survives = lab.add("across", cron_at(due), marks.format(30), "--timeout", "45")
    killed = lab.add("too long", cron_at(due), marks.format(100), "--timeout", "20")
    assert lab.now() < due - 2, "the schedules were added too late for their due"

    slept = lab.suspend(60, at=due + 10)

    assert 55 < slept.slept < 65, slept
    runs = {
        sid: wait_for(lambda sid=sid: finished(lab, sid, 1), 120, f"schedule {sid}'s run")
        for sid in (survives, killed)
    }
    for sid in (survives, killed):
        lab.cli("schedule", "disable", str(sid))

    # 30 s awake + 60 s asleep: 90 s of wall time, twice its 45 s timeout; it ran to its end.
    (run,) = runs[survives]
    assert run["due"] == iso(due) and run["trigger"] == "scheduled"
    assert run["status"] == "succeeded" and run["exit_code"] == 0, run
    start, end = (int(line) for line in run["output_tail"].split())
    assert end - start >= 85 and run["duration"] >= 85, run
    # Its timeout still holds, counted awake: 20 s awake is 10 s before the sleep and 10 s after
    # the resume (killed at the resume if it counted wall time).
    (run,) = runs[killed]
    assert run["status"] == "timed_out", run
    ended = epoch(run["finished_at"])
    assert 8 <= ended - slept.resumed <= 60, (run, slept)
    assert run["duration"] >= 75, run


MANY = 200
"""Schedules due at the same minute: the catch-up wake's write takes a while in the guest."""

HELD = 0.06
"""Seconds the database's write lock must stay held before the guest is suspended: three times
the wake's diary write (17 to 20 ms in the guest, with or without two busy loops on the host), a
fifth of the 200 claims and their starts (0.33 s)."""

SUSPEND_IN_THE_WRITE = r"""
import fcntl, os, struct
# SQLite's WAL write lock (byte 120 of the -shm file) is held from a writer's BEGIN IMMEDIATE to
# the end of its commit; the WAL itself grows only at the commit, too late to aim at. Looked at
# with F_GETLK, which takes nothing.
shm = os.open(args["db"] + "-shm", os.O_RDONLY)
probe = struct.pack("hhqqi4x", fcntl.F_WRLCK, os.SEEK_SET, 120, 1, 0)
held = lambda: struct.unpack("hhqqi4x", fcntl.fcntl(shm, fcntl.F_GETLK, probe))[0] != fcntl.F_UNLCK
first = suspend(None, until=args["until"])
holds, since, deadline = [], None, time.monotonic() + 120
while time.monotonic() < deadline:
    now = time.monotonic()
    if not held():
        if since is not None:
            holds.append(round(now - since, 4))
        since = None
    elif since is None:
        since = now
    elif now - since >= args["held"]:
        break
caught = since is not None
seen = clocks()
second = suspend(args["again"]) if caught else None
result = {"first": first, "caught": caught, "holds": holds, "seen": seen, "second": second}
"""


def test_a_sleep_in_the_middle_of_a_wakes_write_loses_and_doubles_nothing(lab: Lab) -> None:
    due = minute_at(lab.now(), 0, lead=120)  # the import takes a while in the guest
    schedules = [
        {
            "name": f"many {n}", "expr": cron_at(due), "tz": "UTC", "enabled": True,
            "action": {"kind": "command", "argv": [], "shell": "true", "cwd": None, "env": {},
                       "secret_env": {}, "stdin": None},
        }
        for n in range(MANY)
    ]  # fmt: skip
    export = {"format": "domi-desktop/schedules", "version": 1, "schedules": schedules}
    lab.request("sh", cmd="cat > /tmp/many.json", stdin=json.dumps(export))
    lab.cli("import", "/tmp/many.json")
    ids = sorted(s["id"] for s in lab.cli("schedule", "list", "--json") if s["name"][:5] == "many ")
    assert len(ids) == MANY
    assert lab.now() < due - 3, "the schedules were imported too late for their due"

    # Asleep from now until 70 s after the due (past its grace: catch-ups). At the resume the
    # catch-up wake writes its 200 claims: the guest is suspended again once the database's
    # write lock has been held for HELD seconds, mid-transaction.
    done = lab.py(
        SUSPEND_IN_THE_WRITE,
        timeout=600,
        db="/data/domi.sqlite3", until=due + 70, again=30, held=HELD,
    )  # fmt: skip
    assert done["caught"], f"the wake's write was not seen: {done}"
    print(f"\nsleeplab: the write lock's holds (s) before the one slept in: {done['holds']}")
    assert 25 < done["second"]["slept"] < 35, done

    def all_ended() -> list[dict[str, Any]] | None:
        runs = [r for r in lab.runs(limit=5 * MANY) if r["schedule_id"] in ids]
        ended = [r for r in runs if r["status"] in ("succeeded", "failed", "skipped")]
        return runs if len(ended) == len(runs) >= MANY else None

    runs = wait_for(all_ended, 300, "the catch-ups of the 200 schedules", every=5)
    # Left enabled: daily, none is due again before the guest is gone.

    # The claims were committed after the second sleep began: it came in the middle of the write.
    claims = [line for line in lab.app_log().splitlines() if f"claimed {MANY} fire(s)" in line]
    assert len(claims) == 1, claims
    print(f"sleeplab: {claims[0]}")
    committed = datetime.strptime(claims[0][:23], "%Y-%m-%d %H:%M:%S,%f").replace(tzinfo=UTC)
    assert committed.timestamp() > done["second"]["before"]["wall"], (claims, done)

    per_schedule = Counter(r["schedule_id"] for r in runs)
    assert set(per_schedule) == set(ids), "a schedule whose due was lost"
    assert set(per_schedule.values()) == {1}, "a schedule run twice"
    assert {r["due"] for r in runs} == {iso(due)}
    assert {r["status"] for r in runs} == {"succeeded"}, Counter(r["status"] for r in runs)
    assert all(r["late"] and r["trigger"] == "catch_up" for r in runs)
