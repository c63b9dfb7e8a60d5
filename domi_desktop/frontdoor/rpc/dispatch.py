"""JSON-RPC 2.0 requests to answers (docs/protocol.md): validation, batches, error codes. No Qt, no sockets.

The app's server feeds it lines from a client (a ``Peer``); a test feeds it lines directly and
reads what it sends back, so every error code is checked without a socket.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable, Mapping
from typing import Any, Generic, Protocol, TypeVar

from domi_desktop import __version__
from domi_desktop.errors import DomiError, NotFoundError, ParamError
from domi_desktop.frontdoor.rpc.protocol import (
    FAILED,
    HELLO,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    MAX_BATCH,
    METHOD_NOT_FOUND,
    NOT_FOUND,
    PARSE_ERROR,
    POSITIONAL,
    PROTOCOL_MISMATCH,
    PROTOCOL_VERSION,
)
from domi_desktop.frontdoor.wire import check_values

log = logging.getLogger(__name__)

Responder = Callable[[Any], None]
DEFER = object()
"""What an app method returns when it answers later, through its responder."""


class Peer(Protocol):
    def send(self, message: Mapping[str, Any] | list[Any]) -> None: ...

    def owe(self) -> Callable[[], None]:
        """Count an answer still owed; the returned callable settles it (once)."""
        ...


C = TypeVar("C", bound=Peer)

AppMethod = Callable[[C, Mapping[str, Any], Responder], Any]
"""An app method answers by returning a value, or later through the responder (return DEFER);
handing the responder an exception answers with the error it stands for."""


class RpcError(Exception):
    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


class Dispatcher(Generic[C]):
    """Serves ``methods`` (service-level, take params) and ``app_methods`` (take the peer too)."""

    def __init__(
        self,
        methods: Mapping[str, Callable[[Mapping[str, Any]], Any]],
        app_methods: Mapping[str, AppMethod[C]],
    ) -> None:
        self._methods = dict(methods)
        self._app_methods = dict(app_methods)

    def handle_line(self, peer: C, line: bytes) -> None:
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            peer.send(error_reply(None, PARSE_ERROR, "parse error: not valid JSON"))
            return
        if not isinstance(message, list):
            self._handle(peer, message, peer.send)
            return
        if not message:
            peer.send(error_reply(None, INVALID_REQUEST, "invalid request: an empty batch"))
            return
        if len(message) > MAX_BATCH:
            peer.send(
                error_reply(
                    None,
                    INVALID_REQUEST,
                    f"batch of {len(message)} requests: at most {MAX_BATCH} in one batch",
                )
            )
            return
        replies: list[Any] = []
        owed = sum(1 for item in message if not _is_notification(item))
        settle = peer.owe()

        def collect(reply: Any) -> None:
            replies.append(reply)
            if len(replies) == owed:
                peer.send(replies)

        for item in message:
            self._handle(peer, item, collect)
        settle()

    def _handle(self, peer: C, message: Any, reply: Callable[[Any], None]) -> None:
        """Answers ``message`` exactly once through ``reply``, unless it is a notification."""
        try:
            method, raw_params = _validate(message)
        except RpcError as error:
            # Not a request at all, so not a notification either: answered even without an id.
            reply(error_reply(_readable_id(message), error.code, error.message, error.data))
            return
        notification = "id" not in message
        request_id = message.get("id")

        def fail(error: Exception) -> None:
            if not notification:
                reply(error_reply(request_id, *_failure(error)))

        def answer(result: Any) -> None:
            # A method that answers later from another thread hands its exception here.
            if isinstance(result, Exception):
                fail(result)
            elif not notification:
                reply({"jsonrpc": "2.0", "id": request_id, "result": result})

        try:
            if method != HELLO and method not in self._app_methods and method not in self._methods:
                raise RpcError(METHOD_NOT_FOUND, f"method not found: {method}")
            params = _named(method, raw_params)
            check_values(params)
            if method == HELLO:
                answer(_hello(params))
            elif method in self._app_methods:
                self._call_app_method(peer, method, params, answer)
            else:
                answer(self._methods[method](params))
        except Exception as error:  # a bug must not take the app down with a client's request
            fail(error)

    def _call_app_method(
        self, peer: C, method: str, params: Mapping[str, Any], answer: Responder
    ) -> None:
        settle = peer.owe()

        def respond(result: Any) -> None:
            answer(result)
            settle()

        try:
            result = self._app_methods[method](peer, params, respond)
        except BaseException:
            settle()
            raise
        if result is not DEFER:
            respond(result)


def _failure(error: Exception) -> tuple[int, str, Any]:
    """The JSON-RPC error (code, message, data) for what a method raised."""
    if isinstance(error, RpcError):
        return error.code, error.message, error.data
    if isinstance(error, ParamError):
        return INVALID_PARAMS, str(error), {"param": error.param}
    if isinstance(error, NotFoundError):
        return NOT_FOUND, str(error), None
    if isinstance(error, DomiError):
        return FAILED, str(error), None
    if isinstance(error, OverflowError):  # a number the store or the clock cannot hold
        return (
            INVALID_PARAMS,
            f"params: a number is out of range ({error})",
            {"param": "params"},
        )
    log.error("RPC method failed", exc_info=error)
    return INTERNAL_ERROR, "internal error (see the app's log)", None


def _is_notification(message: Any) -> bool:
    """A valid request without an id: the only kind of message that gets no answer."""
    try:
        _validate(message)
    except RpcError:
        return False
    return "id" not in message


def _readable_id(message: Any) -> Any:
    """The id of a message that is not a valid request, when one can be read; else null."""
    request_id = message.get("id") if isinstance(message, dict) else None
    return request_id if _valid_id(request_id) else None


def _valid_id(request_id: Any) -> bool:
    # JSON-RPC ids are strings, numbers or null; objects, arrays and booleans are refused, and
    # so are 1e400 and NaN, which Python reads as floats that cannot be written back as JSON.
    if isinstance(request_id, float):
        return math.isfinite(request_id)
    return request_id is None or (
        isinstance(request_id, (str, int)) and not isinstance(request_id, bool)
    )


def _validate(message: Any) -> tuple[str, Any]:
    """The method and the params (an object or an array) of a valid request object."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        raise RpcError(INVALID_REQUEST, "invalid request: expected a JSON-RPC 2.0 object")
    if not _valid_id(message.get("id")):
        raise RpcError(
            INVALID_REQUEST, "invalid request: 'id' must be a string, a finite number or null"
        )
    method = message.get("method")
    if not isinstance(method, str):
        raise RpcError(INVALID_REQUEST, "invalid request: 'method' must be a string")
    params = message.get("params")
    if params is not None and not isinstance(params, (dict, list)):
        raise RpcError(INVALID_REQUEST, "invalid request: 'params' must be an object or an array")
    return method, params


def _named(method: str, params: dict[str, Any] | list[Any] | None) -> dict[str, Any]:
    """By-name params as they are; by-position ones named in the method's order."""
    if params is None:
        return {}
    if isinstance(params, dict):
        return params
    names = POSITIONAL.get(method)
    if names is None:
        raise RpcError(
            INVALID_PARAMS,
            f"params: {method} takes named parameters only (an object)",
            {"param": "params"},
        )
    if len(params) > len(names):
        listed = f" ({', '.join(names)})" if names else ""
        raise RpcError(
            INVALID_PARAMS,
            f"params: {method} takes at most {len(names)} by position{listed}, not {len(params)}",
            {"param": "params"},
        )
    return dict(zip(names, params, strict=False))


def _hello(params: Mapping[str, Any]) -> dict[str, Any]:
    version = params.get("protocol")
    if not isinstance(version, int) or isinstance(version, bool):
        raise RpcError(INVALID_PARAMS, "protocol: must be an integer", {"param": "protocol"})
    if version != PROTOCOL_VERSION:
        raise RpcError(
            PROTOCOL_MISMATCH,
            f"protocol mismatch: the client speaks version {version}, the app speaks version "
            f"{PROTOCOL_VERSION}; use the same domi-desktop release for both",
            {"client": version, "app": PROTOCOL_VERSION},
        )
    return {"protocol": PROTOCOL_VERSION, "version": __version__}


def error_reply(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}
