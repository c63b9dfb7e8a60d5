"""Monitoring through 30 nights, for real: the headless app (its engine, a real SQLite file, the
API key in a real gnome-keyring) tells a local Healthchecks about its runs while libfaketime walks
its clock through 30 days and the fake logind puts it to sleep every night for 8 hours.

The figures asserted: no check goes down because the laptop slept; each of 20 injected
failures is flagged within the grace period + 60 s of its due; asleep 72 hours, exactly one
alert, the machine's heartbeat.

The app's clock is stepped from due to due (2 s after each, so each fire is on time) and waits
there for the run's last ping: the app's own timer fires the run, as on a laptop left open.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from pathlib import Path

import pytest

from domi_desktop.cron import next_run, parse
from domi_desktop.frontdoor.rpc.client import connect_to_app
from domi_desktop.model import CommandAction, Monitor, Policies
from domi_desktop.secrets import KeyringSecretStore
from domi_desktop.store import Store
from tests.desktop.harness import Child, FakeLogind, Spawn
from tests.support import faketime
from tests.support.fakes import wait_for
from tests.unit.monitor.fake_healthchecks import FakeHealthchecks, Flip
from tests.unit.secrets.conftest import gnome_keyring, secret_service  # noqa: F401 (fixtures)

pytestmark = [
    pytest.mark.keyring,
    pytest.mark.linux_only,
    pytest.mark.slow,
    pytest.mark.skipif(faketime.find_library() is None, reason="needs libfaketime"),
]

API_KEY = "hcw_nights_0123456789abcdefABCDEF"
JOB_TOKEN = "job-token-5f1e0c2a9b"
GRACE = timedelta(minutes=30)
START = datetime(2026, 3, 2, 7, 0, tzinfo=UTC)  # a Monday morning
SLEEP_AT, WAKE_AT = 23, 7
NIGHT_HOURS = 24 - (SLEEP_AT - WAKE_AT)
NIGHTS = 30
HANG_SECONDS = 8
"""Real seconds a hanging job takes, while the test moves the app's clock past the grace."""
PING_WAIT = 30.0
"""Real seconds a run's pings may take on a loaded machine (they take well under one)."""

SCHEDULES = {
    "every 4 hours": "0 */4 * * *",  # a wildcard job: its night dues are missed asleep
    "evening": "30 22 * * *",
    "night": "0 3 * * *",  # always due asleep: run once, late, at the wake
    "lunch": "15 12 * * 1-5",
}


@dataclass
class Laptop:
    hc: FakeHealthchecks
    clock: faketime.FakeClock
    logind: FakeLogind
    app: Child
    flags: Path
    data: Path

    def now(self) -> datetime:
        return datetime.now(UTC) + self.clock.offset

    def set_time(self, when: datetime) -> None:
        """The app's clock moved on to ``when`` while it was awake, and its loop woken to see it.

        libfaketime cannot cut short a wait already in the kernel: the app's loop would sleep on
        in real time, up to the minute its driver looks at the clock. A real clock fires the
        timer at the due, and a real clock change is told by the OS; here a question over the
        socket wakes the loop, which then finds its timers due."""
        self._move_clock(when)
        client = connect_to_app(self.data)
        assert client is not None, "the app's socket has gone"
        try:
            client.call("app.status", {})
        finally:
            client.close()

    def _move_clock(self, when: datetime) -> None:
        self.clock.set_offset(when - datetime.now(UTC))

    def ends(self, name: str) -> int:
        return self.pings(name, "success", "fail")

    def pings(self, name: str, *kinds: str) -> int:
        with self.hc.lock:
            return sum(p.kind in kinds for p in self.hc.by_name(check(name)).pings)

    def sleep(self, hours: float) -> None:
        """PrepareForSleep(true); the sleep starts once the app let go of its delay lock (as
        logind waits), lasts ``hours`` of the app's clock, and PrepareForSleep(false) ends it."""
        self.logind.prepare_for_sleep(True)
        wait_for(lambda: self.logind.inhibitors_held() == 0, PING_WAIT, "the delay lock let go")
        for name in SCHEDULES:
            assert self.hc.by_name(check(name)).status == "paused", name
        self._move_clock(self.now() + timedelta(hours=hours))  # asleep: nothing to wake
        self.logind.prepare_for_sleep(False)
        wait_for(lambda: self.logind.inhibitors_held() == 1, PING_WAIT, "the delay lock again")


def check(name: str) -> str:
    return f"{name} (domi #{list(SCHEDULES).index(name) + 1})"


@pytest.fixture
def laptop(
    tmp_path: Path,
    spawn: Spawn,
    fake_logind: FakeLogind,
    secret_service: object,  # noqa: F811
) -> Iterator[Laptop]:
    KeyringSecretStore().set("hc-key", API_KEY)
    KeyringSecretStore().set("job-token", JOB_TOKEN)
    clock = faketime.fake_clock(tmp_path)
    data = tmp_path / "data"
    flags = tmp_path / "fail"
    flags.mkdir()
    with FakeHealthchecks(API_KEY, now=lambda: datetime.now(UTC) + clock.offset) as hc:
        monitor = Monitor(healthchecks_key="hc-key", healthchecks_api=hc.url, grace=GRACE)
        with Store.open(data, now=START) as store:
            for name, expr in SCHEDULES.items():
                # A flag file named after the schedule makes its next run fail (exit code 3),
                # one ending in .hang makes it hang a while (past the grace, on the app's
                # clock); each job prints its secret, which no ping may carry.
                flag = flags / name.replace(" ", "-")
                command = (
                    f"echo token=$TOKEN; test ! -e {flag} || exit 3; "
                    f"test ! -e {flag}.hang || sleep {HANG_SECONDS}"
                )
                action = CommandAction(shell=command, secret_env=(("TOKEN", "job-token"),))
                store.create_schedule(name, expr, "UTC", action, Policies(monitor=monitor),
                                      now=START)  # fmt: skip
        (data / "settings.json").write_text(json.dumps({
            "healthchecks_key": "hc-key", "healthchecks_api": hc.url, "heartbeat_hours": 24,
        }))  # fmt: skip
        clock.set_offset(START + timedelta(seconds=1) - datetime.now(UTC))
        app = spawn(
            [sys.executable, "-m", "domi_desktop", "--headless"],
            env={"DOMI_DATA_DIR": str(data), **clock.env},
        )
        wait_for(lambda: len(hc.checks) == len(SCHEDULES) + 1, 60, "the checks made by the app")
        wait_for(lambda: fake_logind.inhibitors_held() == 1, 30, "the app's delay lock")
        yield Laptop(hc, clock, fake_logind, app, flags, data)
        app.stop()


def _dues(start: datetime, end: datetime) -> list[tuple[datetime, str]]:
    found = []
    for name, expr in SCHEDULES.items():
        at = start
        while (at := next_run(parse(expr), at, "UTC")) is not None and at < end:
            found.append((at, name))
    return sorted(found)


def _step_to(laptop: Laptop, due: datetime, name: str) -> None:
    before = laptop.ends(name)
    if laptop.now() < due + timedelta(seconds=2):  # never back: two dues may share an instant
        laptop.set_time(due + timedelta(seconds=2))
    wait_for(lambda: laptop.ends(name) > before, PING_WAIT, f"the end ping of {name} at {due}")


def _hang_past_the_grace(laptop: Laptop, flag: Path, due: datetime, name: str) -> None:
    """The run starts at its due and hangs; the app's clock moves on past the grace while it
    does (no other due on the way), and only then does it end, successfully."""
    flag.touch()
    started, ended = laptop.pings(name, "start"), laptop.ends(name)
    laptop.set_time(due + timedelta(seconds=2))
    wait_for(lambda: laptop.pings(name, "start") > started, PING_WAIT, f"{name} started")
    laptop.set_time(due + GRACE + timedelta(seconds=30))
    wait_for(lambda: laptop.ends(name) > ended, PING_WAIT, f"the end ping of {name} at {due}")
    flag.unlink()


def test_thirty_nights_asleep_no_sleep_caused_down_and_every_failure_flagged(
    laptop: Laptop,
) -> None:
    day_dues = [
        _dues(START + timedelta(days=d), START + timedelta(days=d, hours=SLEEP_AT - WAKE_AT))
        for d in range(NIGHTS)
    ]
    awake = [due for dues in day_dues for due in dues]
    # 20 failures spread over the month, on every schedule that runs while the laptop is open.
    failing = {awake[i] for i in range(3, len(awake), len(awake) // 20)}
    failing = set(sorted(failing)[:20])
    assert len(failing) == 20
    # Five of them hang instead of failing: Healthchecks can tell only by the start ping and
    # the grace. Each is one with no other due in the half hour its hang is moved through.
    after = dict(pairwise(awake))
    hanging = {
        d for d in failing
        if after[d][0] - d[0] > GRACE + timedelta(minutes=1) and d[0].hour < SLEEP_AT - 1
    }  # fmt: skip
    hanging = set(sorted(hanging)[::2][:5])
    assert len(hanging) == 5
    flagged: dict[str, list[timedelta]] = {"failed": [], "hung": []}
    for night, dues in enumerate(day_dues):
        for due, name in dues:
            flag = laptop.flags / name.replace(" ", "-")
            if (due, name) in hanging:
                flag = flag.with_name(flag.name + ".hang")
                _hang_past_the_grace(laptop, flag, due, name)
            elif (due, name) in failing:
                flag.touch()
                _step_to(laptop, due, name)
                flag.unlink()
            else:
                _step_to(laptop, due, name)
            if (due, name) in failing:
                [down] = [
                    f for f in laptop.hc.by_name(check(name)).flips
                    if f.new == "down" and f.at >= due
                ]  # fmt: skip
                flagged["hung" if (due, name) in hanging else "failed"].append(down.at - due)
        night_start = START + timedelta(days=night, hours=SLEEP_AT - WAKE_AT)
        laptop.set_time(night_start + timedelta(seconds=1))
        before = {name: laptop.ends(name) for name in ("every 4 hours", "night")}
        laptop.sleep(NIGHT_HOURS)
        # The wake's catch-up: the 4-hourly job and the 03:00 job run once each, late.
        for name, count in before.items():
            wait_for(lambda n=name, c=count: laptop.ends(n) > c, PING_WAIT, f"{name} caught up")

    downs = laptop.hc.downs()
    caused_by_failures = [d for d in downs if _failure_of(d, failing)]
    sleep_caused = [d for d in downs if not _failure_of(d, failing)]
    delays = [*flagged["failed"], *flagged["hung"]]
    print(
        f"nights {NIGHTS}, dues run {len(awake)}, downs {len(downs)}: "
        f"{len(caused_by_failures)} for the 20 injected failures, {len(sleep_caused)} else; "
        f"{len(flagged['failed'])} failed runs flagged within {max(flagged['failed'])} of the "
        f"due, {len(flagged['hung'])} hung ones within {max(flagged['hung'])} (grace {GRACE})"
    )
    assert sleep_caused == [], _explain(laptop, sleep_caused)
    assert len(caused_by_failures) == len(delays) == 20
    assert max(delays) <= GRACE + timedelta(seconds=60)
    assert laptop.hc.by_name("domi heartbeat: " + _machine(laptop)).flips[-1].new == "up"
    _no_secret_went_out(laptop)


def _failure_of(down: tuple[str, Flip], failing: set[tuple[datetime, str]]) -> bool:
    name, flip = down
    return any(
        check(job) == name and timedelta(0) <= flip.at - due <= GRACE + timedelta(seconds=60)
        for due, job in failing
    )


def _explain(laptop: Laptop, downs: list[tuple[str, Flip]]) -> str:
    """What the check was told up to each down, and what the app logged of its failures."""
    told = []
    for name, flip in downs:
        pings = [p for p in laptop.hc.by_name(name).pings if p.at <= flip.at][-3:]
        told += [
            f"{name} {flip}:",
            *(f"  {p.at} {p.kind} {p.exitstatus} {p.body!r}" for p in pings),
        ]
    failed = [line for line in laptop.app.lines() if "failed" in line or "ERROR" in line]
    return "\n".join([*told, "the app's log of failures:", *failed[-40:]])


def _machine(laptop: Laptop) -> str:
    [name] = [c.name for c in laptop.hc.checks.values() if c.name.startswith("domi heartbeat: ")]
    return name.removeprefix("domi heartbeat: ")


def test_a_laptop_asleep_72_hours_gives_exactly_one_alert_its_heartbeat(laptop: Laptop) -> None:
    for due, name in _dues(START, START + timedelta(hours=SLEEP_AT - WAKE_AT)):
        _step_to(laptop, due, name)
    laptop.set_time(START + timedelta(hours=SLEEP_AT - WAKE_AT, seconds=1))
    laptop.sleep(72)
    wait_for(lambda: laptop.ends("night") >= 1, PING_WAIT, "the catch-up after 72 hours")
    time.sleep(1)  # the heartbeat's ping after the wake
    downs = laptop.hc.downs()
    print(f"asleep 72 h: {len(downs)} alert(s): {[name for name, _ in downs]}")
    assert [name for name, _ in downs] == ["domi heartbeat: " + _machine(laptop)]
    heartbeat = laptop.hc.by_name("domi heartbeat: " + _machine(laptop))
    wait_for(lambda: heartbeat.status == "up", PING_WAIT, "the heartbeat up again after the wake")
    _no_secret_went_out(laptop)


def _no_secret_went_out(laptop: Laptop) -> None:
    """The jobs printed their secret: masked in every ping; the API key went in its header
    only; neither is in the app's log."""
    bodies = [p.body for c in laptop.hc.checks.values() for p in c.pings if p.body]
    assert any("token=***" in body for body in bodies)
    for _method, target, headers, body in laptop.hc.requests:
        for secret in (API_KEY, JOB_TOKEN):
            assert secret not in target and secret.encode() not in body
        assert headers.get("x-api-key") in (None, API_KEY)
    log = "\n".join(laptop.app.lines()) + laptop.app.stderr()
    assert API_KEY not in log and JOB_TOKEN not in log
