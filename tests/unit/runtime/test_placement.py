"""Where a schedule may run: its placement in the policies JSON, the CLI options, and the runtime
that claims only what is placed on its machine and whose secrets its keyring holds."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from domi_desktop.cli.parser import build_parser
from domi_desktop.cli.schedules import _job_params
from domi_desktop.errors import ParamError
from domi_desktop.frontdoor.wire import parse_policies, policies_json
from domi_desktop.model import CommandAction, Placement, Policies, RunStatus, WakeReason
from domi_desktop.runtime.placement import UNREACHABLE
from domi_desktop.store import Store, codec
from tests.support import pg
from tests.support.runtime import RuntimeHarness, harnesses

START = datetime(2024, 6, 5, 10, 0, 30, tzinfo=UTC)
PY = sys.executable

# -- the policies JSON ---------------------------------------------------------------------------


def test_named_machines_round_trip_through_the_wire_and_the_store() -> None:
    policies = parse_policies({"placement": "machines", "machines": ["desk", "nas", "desk"]})
    assert (policies.placement, policies.machines) == (Placement.machines, ("desk", "nas"))
    assert policies_json(policies)["machines"] == ["desk", "nas"]
    assert codec.decode_policies(codec.encode_policies(policies)) == policies
    first = parse_policies({"placement": "first_awake"})
    assert codec.decode_policies(codec.encode_policies(first)).placement is Placement.first_awake


def test_a_row_written_before_placement_decodes_to_anywhere() -> None:
    old = '{"v": 1, "catch_up": "latest", "overlap": "skip", "retries": 0}'
    assert codec.decode_policies(old).placement is Placement.anywhere
    assert "placement" not in json.loads(codec.encode_policies(Policies()))


def test_machines_alone_mean_placement_on_those_machines() -> None:
    assert parse_policies({"machines": ["desk"]}).placement is Placement.machines


@pytest.mark.parametrize(
    ("value", "param", "words"),
    [
        ({"placement": "everywhere"}, "policies.placement", "anywhere, machines, first_awake"),
        ({"placement": "machines"}, "policies.machines", "at least one machine"),
        ({"placement": "anywhere", "machines": ["desk"]}, "policies.placement", "must be machines"),
        ({"machines": ["desk", 3]}, "policies.machines", "list of machine names"),
        ({"machines": ["x" * 65]}, "policies.machines", "is not a machine name"),
        ({"machines": "desk"}, "machines", "must be list"),
    ],
)
def test_a_bad_placement_names_the_field(value: dict[str, object], param: str, words: str) -> None:
    with pytest.raises(ParamError) as caught:
        parse_policies(value)
    assert caught.value.param == param
    assert words in str(caught.value)


def test_switching_to_anywhere_forgets_the_machines() -> None:
    placed = parse_policies({"machines": ["desk"]})
    assert parse_policies({"placement": "anywhere"}, placed).machines == ()


# -- the CLI ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (["--run-on", "desk", "--run-on", "nas"], {"placement": "machines", "machines": ["desk", "nas"]}),
        (["--first-awake"], {"placement": "first_awake"}),
        (["--run-anywhere"], {"placement": "anywhere"}),
    ],
)  # fmt: skip
def test_schedule_edit_takes_where_to_run(options: list[str], expected: dict[str, object]) -> None:
    args = build_parser().parse_args(["schedule", "edit", "1", *options])
    assert _job_params(args, editing=True) == {"policies": expected}


def test_run_on_and_first_awake_together_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["schedule", "edit", "1", "--run-on", "a", "--first-awake"])
    assert "not allowed with argument" in capsys.readouterr().err


# -- the runtime -----------------------------------------------------------------------------------


@pytest.fixture
def machines() -> Iterator[Callable[[Store, dict[str, str]], RuntimeHarness]]:
    """One machine's runtime on a store, with its own keyring; each stopped at the end."""
    with contextlib.ExitStack() as made:

        def machine(store: Store, secrets: dict[str, str]) -> RuntimeHarness:
            return made.enter_context(harnesses(store, secrets=secrets, start=START))()

        yield machine


def _add(store: Store, name: str, policies: Policies, secret: str | None = None) -> int:
    action = CommandAction(
        argv=(PY, "-c", "pass"), secret_env=(("TOKEN", secret),) if secret else ()
    )
    created = store.create_schedule(
        name, "* * * * *", "UTC", action, policies, now=START - timedelta(seconds=40)
    )
    return created.id


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[Store]:
    store = Store.open(tmp_path / "data", now=START, url="sqlite", machine="desk")
    yield store
    store.close()


@pytest.fixture
def shared_store(postgresql_dsn: str, tmp_path: Path) -> Iterator[Store]:
    with pg.fresh_database(postgresql_dsn, f"placement_{os.getpid()}") as url:
        store = Store.open(tmp_path / "data", now=START, url=url, machine="desk")
        yield store
        store.close()


def test_a_schedule_placed_on_other_machines_is_not_claimed_here(
    sqlite_store: Store, machines: Callable[[Store, dict[str, str]], RuntimeHarness]
) -> None:
    here = _add(sqlite_store, "here", Policies(placement=Placement.machines, machines=("desk",)))
    away = _add(sqlite_store, "away", Policies(placement=Placement.machines, machines=("nas",)))
    anywhere = _add(sqlite_store, "anywhere", Policies(placement=Placement.first_awake))
    machine = machines(sqlite_store, {})
    plan = machine.runtime.start()
    machine.settle()
    assert sorted(fire.schedule_id for fire in plan.fires) == [here, anywhere]
    assert sqlite_store.runs(away) == []
    assert machine.runtime.not_here() == {away: "placed on nas, not on desk"}


def test_a_machine_without_the_secret_skips_the_claim_and_says_why(
    shared_store: Store, machines: Callable[[Store, dict[str, str]], RuntimeHarness]
) -> None:
    needs = _add(shared_store, "login", Policies(), secret="login-api")
    machine = machines(shared_store, {})
    plan = machine.runtime.start()
    machine.settle()
    assert plan.fires == ()
    assert shared_store.runs(needs) == []
    assert machine.runtime.not_here() == {
        needs: "secret login-api is not in this machine's keyring"
    }
    # The secret added: the next wake claims the due, late, by the normal catch-up rule.
    machine.runtime.secrets.set("login-api", "token")
    machine.clock.advance(timedelta(seconds=5))
    woke = machine.runtime.driver.wake(WakeReason.timer)
    machine.settle()
    assert [fire.schedule_id for fire in woke.fires] == [needs]
    assert machine.runtime.not_here() == {}


def test_without_the_shared_store_nothing_is_claimed_and_nothing_recorded(
    shared_store: Store, machines: Callable[[Store, dict[str, str]], RuntimeHarness]
) -> None:
    job = _add(shared_store, "job", Policies())
    machine = machines(shared_store, {})
    machine.runtime.link_lost(f"{UNREACHABLE}: connection refused")
    machine.start()
    assert shared_store.runs(job) == []
    # Back: the due passed meanwhile is decided by the catch-up rule, once.
    machine.runtime.link_lost(None)
    machine.clock.advance(timedelta(minutes=3))
    machine.wake(WakeReason.timer)
    runs = sorted(shared_store.runs(job), key=lambda run: run.due or START)
    minute = START.replace(second=0)
    assert [run.due for run in runs] == [minute + timedelta(minutes=n) for n in range(4)]
    assert [run.status is RunStatus.skipped for run in runs] == [True, True, True, False]
