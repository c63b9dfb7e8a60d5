"""The service and the JSON-RPC dispatcher in-process: a real store file, a fake clock, no Qt and no
socket. Every JSON-RPC error code of ``protocol`` is produced here."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from domi_desktop.errors import DomiError, ParamError
from domi_desktop.frontdoor.rpc import protocol
from domi_desktop.frontdoor.rpc.dispatch import DEFER, Dispatcher, Responder
from domi_desktop.frontdoor.service import METHODS, Service
from domi_desktop.frontdoor.wire import MAX_NOTES
from domi_desktop.store import Store
from tests.support.fakes import FakeClock

NOW = datetime(2024, 6, 5, 7, 30, tzinfo=UTC)
COMMAND = {"kind": "command", "argv": ["/bin/true"]}


class Peer:
    """A client as the dispatcher sees it: what was sent back, and answers still owed."""

    def __init__(self) -> None:
        self.sent: list[Any] = []
        self.owed = 0

    def send(self, message: Mapping[str, Any] | list[Any]) -> None:
        self.sent.append(json.loads(json.dumps(message)))

    def owe(self) -> Callable[[], None]:
        self.owed += 1

        def settle() -> None:
            self.owed -= 1

        return settle


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    clock = FakeClock(NOW)
    with Store.open(tmp_path / "data", now=clock.now()) as store:
        yield Service(store, clock)


@pytest.fixture
def dispatcher(service: Service) -> Dispatcher[Peer]:
    def later(_peer: Peer, _params: Mapping[str, Any], respond: Responder) -> Any:
        respond({"answered": "later"})
        return DEFER

    def refuse(_peer: Peer, _params: Mapping[str, Any], _respond: Responder) -> Any:
        raise DomiError("the keyring is locked")

    def crash(_peer: Peer, _params: Mapping[str, Any], _respond: Responder) -> Any:
        raise ZeroDivisionError("a bug")

    methods = {name: (lambda p, m=method: m(service, p)) for name, method in METHODS.items()}
    return Dispatcher(methods, {"test.later": later, "test.refuse": refuse, "test.crash": crash})


def call(dispatcher: Dispatcher[Peer], message: Any) -> Any:
    peer = Peer()
    line = message if isinstance(message, bytes) else json.dumps(message).encode()
    dispatcher.handle_line(peer, line)
    assert peer.owed == 0, "every answer owed was settled"
    (reply,) = peer.sent
    return reply


def request(method: str, params: Any = None, request_id: Any = 1) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def error_of(reply: Any) -> tuple[int, str, Any]:
    assert "result" not in reply, reply
    error = reply["error"]
    return error["code"], error["message"], error.get("data")


# -- the service ---------------------------------------------------------------------------------


def test_a_created_schedule_is_listed_with_its_next_run_on_the_fake_clock(service: Service) -> None:
    created = service.create_schedule(
        {"name": "Rate-limit report", "expr": "0 9 * * 1-5", "tz": "Europe/Riga", "action": COMMAND}
    )
    (listed,) = service.list_schedules()
    assert listed == {**created, "broken": None}
    # 07:30 UTC is 10:30 in Riga: the next 09:00 there is the next morning, in the schedule's zone.
    assert listed["next_run"] == "2024-06-06T09:00:00+03:00"
    assert listed["description"] == "At 09:00, Monday through Friday"


def test_an_edit_is_checked_and_names_the_parameter(service: Service) -> None:
    created = service.create_schedule({"name": "x", "expr": "0 9 * * *", "action": COMMAND})
    with pytest.raises(ParamError) as caught:
        service.update_schedule({"id": created["id"], "policies": {"retries": 1000}})
    assert caught.value.param == "policies.retries"
    assert service.get_schedule({"id": created["id"]})["policies"]["retries"] == 0


def test_preview_counts_from_the_clock_and_stops_at_count(service: Service) -> None:
    preview = service.preview({"expr": "*/15 * * * *", "tz": "UTC", "count": 3})
    assert preview["next"] == [
        "2024-06-05T07:45:00+00:00",
        "2024-06-05T08:00:00+00:00",
        "2024-06-05T08:15:00+00:00",
    ]


def test_export_then_import_round_trips_everything_but_ids_and_history(service: Service) -> None:
    service.create_schedule(
        {
            "name": "Report",
            "expr": "0 9 * * 1-5",
            "tz": "America/New_York",
            "action": {"kind": "command", "argv": ["report"], "secret_env": {"TOKEN": "api"}},
            "policies": {"overlap": "queue", "retries": 2, "timeout": 60},
            "notes": "Feeds the Monday dashboard.\nIf it fails: call Ana (ops).",
        }
    )
    document = service.export({})
    assert "api" in json.dumps(document) and document["schedules"][0]["name"] == "Report"
    result = service.import_({"document": document})
    assert result == {"created": [2], "checked": 1}
    first, second = service.list_schedules()
    same = ("name", "expr", "tz", "enabled", "action", "policies", "notes")
    assert {k: first[k] for k in same} == {k: second[k] for k in same}
    assert second["notes"] == "Feeds the Monday dashboard.\nIf it fails: call Ana (ops)."


def test_an_export_made_before_notes_existed_imports_with_empty_notes(service: Service) -> None:
    older = {
        "format": "domi-desktop/schedules",
        "version": 1,
        "schedules": [{"name": "old", "expr": "0 9 * * *", "tz": "UTC", "action": COMMAND}],
    }
    assert service.import_({"document": older}) == {"created": [1], "checked": 1}
    assert service.get_schedule({"id": 1})["notes"] == ""


def test_notes_are_kept_shown_and_changed_only_when_given(service: Service) -> None:
    created = service.create_schedule(
        {"name": "x", "expr": "0 9 * * *", "action": COMMAND, "notes": "why:\tbackups"}
    )
    assert created["notes"] == "why:\tbackups"
    renamed = service.update_schedule({"id": created["id"], "name": "y"})
    assert (renamed["name"], renamed["notes"]) == ("y", "why:\tbackups")
    edited = service.update_schedule({"id": created["id"], "notes": "line 1\r\nline 2"})
    assert edited["notes"] == "line 1\nline 2"
    assert service.get_schedule({"id": created["id"]})["notes"] == "line 1\nline 2"
    cleared = service.update_schedule({"id": created["id"], "notes": None})
    assert cleared["notes"] == ""
    plain = service.create_schedule({"name": "z", "expr": "0 9 * * *", "action": COMMAND})
    assert plain["notes"] == ""


@pytest.mark.parametrize(
    ("notes", "message"),
    [
        ("x" * (MAX_NOTES + 1), f"notes: is too long (4001 characters, at most {MAX_NOTES})"),
        ("ok\x1b[2J", "notes: has a control character (U+001B) at position 3"),
        ("ok\rno", "notes: has a control character (U+000D) at position 3"),
        ("\u202eevil", "notes: has a control character (RIGHT-TO-LEFT OVERRIDE) at position 1"),
        (["a list"], "notes: must be a string, not list"),
    ],
)
def test_bad_notes_are_refused_naming_the_field_and_nothing_changes(
    service: Service, notes: Any, message: str
) -> None:
    with pytest.raises(ParamError, match=re.escape(message)) as caught:
        service.create_schedule(
            {"name": "x", "expr": "0 9 * * *", "action": COMMAND, "notes": notes}
        )
    assert caught.value.param == "notes"
    created = service.create_schedule(
        {"name": "x", "expr": "0 9 * * *", "action": COMMAND, "notes": "x" * MAX_NOTES}
    )
    with pytest.raises(ParamError, match=re.escape(message)):
        service.update_schedule({"id": created["id"], "notes": notes})
    assert service.get_schedule({"id": created["id"]})["notes"] == "x" * MAX_NOTES
    document = service.export({})
    document["schedules"][0]["notes"] = notes
    with pytest.raises(ParamError) as refused:
        service.import_({"document": document})
    assert refused.value.param == "schedules[0].notes"
    assert len(service.list_schedules()) == 1


def test_an_import_with_one_bad_entry_creates_nothing_and_names_the_entry(
    service: Service,
) -> None:
    document = service.export({})
    document["schedules"] = [
        {"name": "good", "expr": "0 9 * * *", "action": COMMAND},
        {"name": "bad", "expr": "0 9 * *", "action": COMMAND},
    ]
    with pytest.raises(ParamError) as caught:
        service.import_({"document": document})
    assert caught.value.param == "schedules[1].expr"
    assert service.list_schedules() == []


# -- every JSON-RPC error code ----------------------------------------------------------------


def test_garbage_is_a_parse_error(dispatcher: Dispatcher[Peer]) -> None:
    code, _message, _data = error_of(call(dispatcher, b"{not json"))
    assert code == protocol.PARSE_ERROR == -32700


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "1.0", "id": 1, "method": "schedule.list"},
        {"jsonrpc": "2.0", "id": 1, "method": 7},
        {"jsonrpc": "2.0", "id": {"an": "object"}, "method": "schedule.list"},
        {"jsonrpc": "2.0", "id": [1], "method": "schedule.list"},
        {"jsonrpc": "2.0", "id": True, "method": "schedule.list"},
        [],
    ],
)
def test_a_malformed_request_is_an_invalid_request(
    dispatcher: Dispatcher[Peer], message: Any
) -> None:
    code, _message, _data = error_of(call(dispatcher, message))
    assert code == protocol.INVALID_REQUEST == -32600


def test_a_batch_over_the_limit_is_refused_whole_with_one_error(
    dispatcher: Dispatcher[Peer],
) -> None:
    batch = [request("schedule.list", request_id=i) for i in range(protocol.MAX_BATCH + 1)]
    code, message, _data = error_of(call(dispatcher, batch))
    assert code == protocol.INVALID_REQUEST and str(protocol.MAX_BATCH) in message


def test_a_batch_is_answered_in_one_reply_with_a_deferred_answer_in_it(
    dispatcher: Dispatcher[Peer],
) -> None:
    replies = call(
        dispatcher, [request("schedule.list", request_id=1), request("test.later", {}, 2)]
    )
    assert {reply["id"]: reply["result"] for reply in replies} == {1: [], 2: {"answered": "later"}}


def test_an_unknown_method_is_method_not_found(dispatcher: Dispatcher[Peer]) -> None:
    code, message, _data = error_of(call(dispatcher, request("schedule.explode")))
    assert code == protocol.METHOD_NOT_FOUND == -32601 and "schedule.explode" in message


@pytest.mark.parametrize(
    ("params", "param"),
    [
        ({"name": "x", "expr": "0 9 * *", "action": COMMAND}, "expr"),
        ({"name": "x", "expr": "0 9 * * *", "tz": "Mars/Olympus", "action": COMMAND}, "tz"),
        ({"name": "x", "expr": "0 9 * * *", "action": {"kind": "fax"}}, "action.kind"),
        ({"name": "", "expr": "0 9 * * *", "action": COMMAND}, "name"),
        ({"name": "x", "expr": "0 9 * * *", "action": COMMAND, "notes": 7}, "notes"),
        (
            {"name": "x", "expr": "0 9 * * *", "action": COMMAND, "policies": {"timeout": -1}},
            "policies.timeout",
        ),
    ],
)
def test_bad_params_are_invalid_params_naming_the_parameter(
    dispatcher: Dispatcher[Peer], params: dict[str, Any], param: str
) -> None:
    code, _message, data = error_of(call(dispatcher, request("schedule.create", params)))
    assert code == protocol.INVALID_PARAMS == -32602
    assert data == {"param": param}


def test_an_integer_beyond_64_bits_is_invalid_params_not_an_internal_error(
    dispatcher: Dispatcher[Peer],
) -> None:
    code, _message, data = error_of(call(dispatcher, request("schedule.get", {"id": 10**20})))
    assert code == protocol.INVALID_PARAMS and data == {"param": "id"}


def test_params_that_are_not_an_object_are_invalid_params(dispatcher: Dispatcher[Peer]) -> None:
    code, _message, _data = error_of(call(dispatcher, request("schedule.list", [1, 2])))
    assert code == protocol.INVALID_PARAMS


def test_an_unknown_id_is_not_found(dispatcher: Dispatcher[Peer]) -> None:
    code, message, _data = error_of(call(dispatcher, request("schedule.get", {"id": 42})))
    assert code == protocol.NOT_FOUND == -32004 and "42" in message


def test_a_failure_the_app_understood_is_failed_with_its_message(
    dispatcher: Dispatcher[Peer],
) -> None:
    code, message, _data = error_of(call(dispatcher, request("test.refuse", {})))
    assert code == protocol.FAILED == -32000 and message == "the keyring is locked"


def test_a_bug_is_an_internal_error_that_leaks_nothing(dispatcher: Dispatcher[Peer]) -> None:
    code, message, _data = error_of(call(dispatcher, request("test.crash", {})))
    assert code == protocol.INTERNAL_ERROR == -32603 and "ZeroDivision" not in message


def test_a_client_of_another_protocol_version_is_told_both(dispatcher: Dispatcher[Peer]) -> None:
    reply = call(dispatcher, request(protocol.HELLO, {"protocol": protocol.PROTOCOL_VERSION + 1}))
    code, _message, data = error_of(reply)
    assert code == protocol.PROTOCOL_MISMATCH == -32001
    assert data == {"client": protocol.PROTOCOL_VERSION + 1, "app": protocol.PROTOCOL_VERSION}
    hello = call(dispatcher, request(protocol.HELLO, {"protocol": protocol.PROTOCOL_VERSION}))
    assert hello["result"]["protocol"] == protocol.PROTOCOL_VERSION


def test_a_notification_gets_no_answer(dispatcher: Dispatcher[Peer]) -> None:
    peer = Peer()
    dispatcher.handle_line(peer, json.dumps({"jsonrpc": "2.0", "method": "schedule.list"}).encode())
    assert peer.sent == []
