"""One-offs, skip and snooze at the front door: the service on a real store file with a fake
clock, and the CLI's words with no app running."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from domi_desktop.cli.holds import parse_span
from domi_desktop.errors import ParamError, UsageError
from domi_desktop.frontdoor.service import METHODS, Service
from domi_desktop.model import Hold, Policies
from domi_desktop.store import Store
from domi_desktop.store.codec import decode_policies, encode_policies
from tests.support.cli import Cli
from tests.support.fakes import FakeClock

NOW = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)
COMMAND = {"kind": "command", "argv": ["/bin/true"]}


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    clock = FakeClock(NOW)
    with Store.open(tmp_path / "data", now=clock.now()) as store:
        yield Service(store, clock)


def test_a_one_off_is_read_in_its_zone_and_named_by_a_cron_of_its_date(service: Service) -> None:
    made = service.create_schedule(
        {"name": "xmas", "at": "2026-12-24T07:00", "tz": "Europe/Riga", "action": COMMAND}
    )
    assert made["once_at"] == "2026-12-24T05:00:00+00:00"
    assert made["next_run"] == made["once_at"]
    assert made["expr"] == "0 7 24 12 *" and made["done"] is False


def test_a_one_off_in_the_past_is_refused_naming_at(service: Service) -> None:
    with pytest.raises(ParamError, match=r"^at: .*has passed"):
        service.create_schedule(
            {"name": "old", "at": "2026-12-07T11:00", "tz": "UTC", "action": COMMAND}
        )
    with pytest.raises(ParamError, match=r"^at: 'soon' is not a date"):
        service.create_schedule({"name": "old", "at": "soon", "action": COMMAND})


def test_skip_names_the_next_due_and_undo_forgets_it(service: Service) -> None:
    made = service.create_schedule(
        {"name": "daily", "expr": "0 9 * * *", "tz": "UTC", "action": COMMAND}
    )
    shown = METHODS["schedule.skip"](service, {"id": made["id"]})
    assert shown["skipping"] == "2026-12-08T09:00:00+00:00"
    assert shown["last_due"] == made["last_due"]  # a skip is no edit of the time: nothing restarts
    kept = service.update_schedule({"id": made["id"], "policies": {"timeout": 60}})
    assert kept["skipping"] == "2026-12-08T09:00:00+00:00"
    undone = METHODS["schedule.skip"](service, {"id": made["id"], "undo": True})
    assert undone["skipping"] is None and undone["policies"].get("hold") is None


def test_snooze_moves_the_next_due_later_and_refuses_nonsense(service: Service) -> None:
    made = service.create_schedule(
        {"name": "daily", "expr": "0 9 * * *", "tz": "UTC", "action": COMMAND}
    )
    shown = METHODS["schedule.snooze"](service, {"id": made["id"], "seconds": 3600})
    assert shown["snoozed"] == {
        "due": "2026-12-08T09:00:00+00:00",
        "until": "2026-12-08T10:00:00+00:00",
    }
    assert shown["next_run"] == "2026-12-08T10:00:00+00:00"
    for bad in (0, -5, True, "1h", 10**9):
        with pytest.raises(ParamError, match=r"^seconds: "):
            METHODS["schedule.snooze"](service, {"id": made["id"], "seconds": bad})


def test_a_cron_edit_turns_a_one_off_back_into_a_recurring_schedule(service: Service) -> None:
    made = service.create_schedule(
        {"name": "once", "at": "2026-12-09T07:00", "tz": "UTC", "action": COMMAND}
    )
    edited = service.update_schedule({"id": made["id"], "expr": "0 8 * * *"})
    assert edited["once_at"] is None and edited["next_run"] == "2026-12-08T08:00:00+00:00"


def test_the_one_off_and_the_hold_survive_the_store_and_old_rows_read_without_them() -> None:
    at = datetime(2026, 12, 24, 5, 0, tzinfo=UTC)
    policies = Policies(once_at=at, hold=Hold(due=at, until=at + timedelta(hours=1)))
    assert decode_policies(encode_policies(policies)) == policies
    assert decode_policies(encode_policies(Policies())) == Policies()
    assert "once_at" not in encode_policies(Policies())


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90s", 90), ("10m", 600), ("1h", 3600), ("1h30m", 5400), ("2d", 172800), ("15", 900)],
)
def test_snooze_spans_read_as_people_write_them(text: str, seconds: int) -> None:
    assert parse_span(text) == timedelta(seconds=seconds)


@pytest.mark.parametrize("text", ["", "h", "1x", "1h 2", "-1h", "1hh", "0m", "367d", "9" * 400])
def test_a_span_that_is_not_one_is_refused_in_one_line(text: str) -> None:
    with pytest.raises(UsageError, match=r"is not a time span|is not between"):
        parse_span(text)


def test_the_cli_adds_a_one_off_skips_snoozes_and_undoes(cli: Cli) -> None:
    code, _, err = cli(
        "schedule", "add", "trip", "--at", "2099-12-24T07:00", "--tz", "UTC", "--", "true"
    )
    assert code == 0, err
    code, out, _ = cli("schedule", "list")
    assert "once" in out and "2099-12-24" in out
    code, out, err = cli("schedule", "skip", "1")
    assert code == 0 and "skipping" in out, err
    code, out, _ = cli("schedule", "snooze", "1", "1h", "--json")
    snoozed: dict[str, Any] = json.loads(out)["snoozed"]
    assert snoozed["until"] == "2099-12-24T08:00:00+00:00"
    code, out, _ = cli("schedule", "snooze", "1", "--undo")
    assert code == 0 and "runs as planned" in out
    assert (
        cli(
            "schedule",
            "add",
            "both",
            "--cron",
            "* * * * *",
            "--at",
            "2099-01-01T00:00",
            "--",
            "true",
        )[0]
        == 2
    )
    code, _, err = cli("schedule", "snooze", "1")
    assert code == 2 and "say for how long" in err
