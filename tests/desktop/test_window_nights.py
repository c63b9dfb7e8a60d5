"""Once inside a window, the live app: the headless app under libfaketime with the fake UPower,
30 nights of ``@daily --window 22:00-06:00 --on-ac-power``. Each night the laptop is looked at
a few random moments (its clock set there and poked: asleep between), on the charger or not;
the oracle says night by night whether it runs and when, or is skipped and why (the sleeps to
the minute or two: the app's clock runs on while it is looked at)."""

from __future__ import annotations

import itertools
import random
import re
import sys
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.desktop.harness import FakeUPower
from tests.desktop.headless_app import App
from tests.support import faketime

pytestmark = [
    pytest.mark.gui,
    pytest.mark.slow,
    pytest.mark.linux_only,
    pytest.mark.skipif(faketime.find_library() is None, reason="needs libfaketime"),
]

NIGHTS = 30
WAIT = 60.0


def oracle(start: datetime, end: datetime, looks: list[tuple[datetime, bool]]) -> tuple[str, Any]:
    """The night's outcome: ``("ran", moment)`` at the first look inside on the charger, else
    ``("skipped", reason)`` as what the app saw says it: the stretches no look saw are sleeps."""
    inside = [(t, ac) for t, ac in looks if start <= t < end]
    for t, ac in inside:
        if ac:
            return "ran", t
    edges = [start, *(t for t, _ in inside), end]
    sleeps = [(a, b) for a, b in itertools.pairwise(edges) if b - a > timedelta(minutes=3)]
    # Awake at a look inside (on battery, or it would have run): the rest of the window.
    return "skipped", (sleeps, bool(inside))


def minutes(text: str) -> int:
    hours, mins = text.split(":")
    return int(hours) * 60 + int(mins)


def near(said: str, wanted: datetime) -> bool:
    """The app's minute against the look's: its clock ran on while it was looked at."""
    gap = (minutes(said) - (wanted.hour * 60 + wanted.minute)) % (24 * 60)
    return gap <= 2 or gap >= 24 * 60 - 1


def reason_matches(reason: str, sleeps: list[tuple[datetime, datetime]], awake: bool) -> bool:
    parts = reason.split(", ")
    if awake != (parts[-1] == "on battery the rest of the window"):
        return False
    spans = [p.removeprefix("asleep ").split("-") for p in parts if p.startswith("asleep ")]
    return len(spans) == len(sleeps) and all(
        near(a, want_a) and near(b, want_b)
        for (a, b), (want_a, want_b) in zip(spans, sleeps, strict=True)
    )


def test_thirty_nights_give_the_oracles_outcome_night_by_night(
    app: App, fake_upower: FakeUPower
) -> None:
    rng = random.Random(30)
    added = app.cli(
        "schedule", "add", "Nightly backup", "--cron", "@daily", "--tz", "UTC",
        "--window", "22:00-06:00", "--on-ac-power", "--json", "--", sys.executable, "-c",
        "print('backed up')",
    )  # fmt: skip
    schedule = int(added["id"])
    app.start()
    first_day = app.fake_start + timedelta(hours=2)  # the first due: the midnight ahead
    plans: list[list[tuple[datetime, bool]]] = []
    for night in range(NIGHTS):
        day = first_day + timedelta(days=night)
        minutes = sorted(rng.sample(range(20 * 60, 32 * 60), rng.randint(1, 4)))
        plans.append(
            [(day + timedelta(minutes=m, seconds=30), rng.random() < 0.35) for m in minutes]
        )
    expected: dict[datetime, tuple[str, Any]] = {}
    for night, looks in enumerate(plans):
        day = first_day + timedelta(days=night)
        expected[day] = oracle(day + timedelta(hours=22), day + timedelta(hours=30), looks)

    for night, looks in enumerate(plans):
        day = first_day + timedelta(days=night)
        app.at(day + timedelta(hours=12))  # awake at noon: the day's due is claimed
        app.poke()
        for moment, ac in looks:
            app.at(moment)
            fake_upower.update(on_battery=not ac)
            app.poke()
            app.poke()
    app.at(first_day + timedelta(days=NIGHTS, hours=12))
    app.poke()
    time.sleep(2)
    app.poke()

    runs = app.runs(schedule)
    by_due: dict[datetime, list[dict[str, object]]] = {}
    for run in runs:
        by_due.setdefault(datetime.fromisoformat(str(run["due"])).astimezone(UTC), []).append(run)
    outcomes = []
    for due, (kind, what) in sorted(expected.items()):
        got = by_due.get(due, [])
        assert len(got) == 1, f"night of {due:%m-%d}: {got}"
        run = got[0]
        outcome = kind
        if kind == "ran":
            assert run["status"] == "succeeded", f"night of {due:%m-%d}: {run}"
            started = datetime.fromisoformat(str(run["started_at"])).astimezone(UTC)
            assert isinstance(what, datetime)
            assert what <= started < what + timedelta(seconds=WAIT), (due, run)
        else:
            assert run["status"] == "skipped", f"night of {due:%m-%d}: {run}"
            sleeps, awake = what
            assert reason_matches(str(run["reason"]), sleeps, awake), (due, run["reason"], what)
            if not awake and len(sleeps) == 1:
                # Asleep the whole window: the sleep alone is the reason, as History shows it.
                assert re.fullmatch(r"asleep \d\d:\d\d-\d\d:\d\d", str(run["reason"])), run
                outcome = "slept through"
        outcomes.append(outcome)
    print(
        f"{outcomes.count('ran')} nights ran, {outcomes.count('skipped')} skipped awake, "
        f"{outcomes.count('slept through')} slept through"
    )
    assert {"ran", "skipped", "slept through"} <= set(outcomes)
    assert "Traceback" not in app.log()
