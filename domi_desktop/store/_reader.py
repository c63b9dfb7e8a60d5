"""Typed reading of one stored JSON document (an action, the policies, a part of them): every
mismatch is a ``CodecError`` naming the key; and a stored enum value read back."""

from __future__ import annotations

import json
from datetime import timedelta
from enum import Enum
from typing import Any, TypeVar

from domi_desktop.errors import ParamError
from domi_desktop.model import Pairs
from domi_desktop.scheduler.opportunity import OPPORTUNITY, opportunity_changes

_E = TypeVar("_E", bound=Enum)
_T = TypeVar("_T")


class CodecError(ValueError):
    """A stored document that does not decode; the store raises a ``StoreError`` with the id."""


class Reader:
    """Typed access to one decoded document; every mismatch is a ``CodecError`` naming the key."""

    def __init__(self, text: str, what: str, version: int) -> None:
        try:
            document = json.loads(text)
        except (TypeError, ValueError) as exc:
            raise CodecError(f"{what} is not valid JSON ({exc})") from None
        if not isinstance(document, dict):
            raise CodecError(f"{what} is not a JSON object")
        self._document: dict[str, Any] = document
        self._what = what
        found = self._get("v", int)
        if found > version:
            raise CodecError(
                f"{what} has shape version {found}, written by a newer domi-desktop "
                f"(this one reads up to {version})"
            )

    def part(self, key: str) -> Reader | None:
        """The reader of the object under ``key``; ``None`` when it is absent or null."""
        if self._document.get(key) is None:
            return None
        inner = object.__new__(Reader)
        inner._document = self._get(key, dict)
        inner._what = f"{self._what}.{key}"
        return inner

    def opportunity(self) -> dict[str, Any]:
        """The window and away conditions, as ``Conditions`` changes."""
        given = {key: self._document[key] for key in OPPORTUNITY if key in self._document}
        try:
            return opportunity_changes(given, f"{self._what}.")
        except ParamError as error:
            raise CodecError(str(error)) from None

    def flag(self, key: str, default: bool) -> bool:
        if key not in self._document:
            return default
        return self._get(key, bool)

    def optional_flag(self, key: str) -> bool | None:
        if self._document.get(key) is None:
            return None
        return self._get(key, bool)

    def optional_integer(self, key: str) -> int | None:
        if self._document.get(key) is None:
            return None
        return self._get(key, int)

    def _get(self, key: str, kind: type[_T]) -> _T:
        if key not in self._document:
            raise CodecError(f"{self._what} lacks {key!r}")
        value = self._document[key]
        # bool is an int subclass; a stored true must not pass as a count.
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise CodecError(f"{self._what}: {key!r} should be {kind.__name__}, not {value!r}")
        return value

    def text(self, key: str, default: str | None = None) -> str:
        if default is not None and key not in self._document:
            return default
        return self._get(key, str)

    def optional_text(self, key: str) -> str | None:
        if self._document.get(key) is None:
            return None
        return self._get(key, str)

    def integer(self, key: str, default: int) -> int:
        if key not in self._document:
            return default
        return self._get(key, int)

    def number(self, key: str, default: float) -> float:
        if key not in self._document:
            return default
        value = self._document[key]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise CodecError(f"{self._what}: {key!r} should be a number, not {value!r}")
        return float(value)

    def duration(self, key: str, default: timedelta) -> timedelta:
        return self._to_timedelta(key, self.number(key, default.total_seconds()))

    def optional_duration(self, key: str) -> timedelta | None:
        if self._document.get(key) is None:
            return None
        return self._to_timedelta(key, self.number(key, 0.0))

    def _to_timedelta(self, key: str, seconds: float) -> timedelta:
        try:
            return timedelta(seconds=seconds)
        except OverflowError:
            raise CodecError(f"{self._what}: {key!r} is out of range ({seconds})") from None

    def strings(self, key: str) -> tuple[str, ...]:
        items = self._get(key, list) if key in self._document else []
        if not all(isinstance(item, str) for item in items):
            raise CodecError(f"{self._what}: {key!r} should be a list of strings")
        return tuple(items)

    def pairs(self, key: str) -> Pairs:
        items = self._get(key, list) if key in self._document else []
        result: list[tuple[str, str]] = []
        for item in items:
            if not (
                isinstance(item, list) and len(item) == 2 and all(isinstance(s, str) for s in item)
            ):
                raise CodecError(f"{self._what}: {key!r} should be a list of [name, value] pairs")
            result.append((item[0], item[1]))
        return tuple(result)

    def member(self, key: str, enum: type[_E], default: _E) -> _E:
        if key not in self._document:
            return default
        value = self._get(key, str)
        try:
            return enum(value)
        except ValueError:
            raise CodecError(f"{self._what}: unknown {key} {value!r}") from None


def decode_member(enum: type[_E], value: str, what: str) -> _E:
    """A stored enum value; ``what`` names the column for the error message."""
    # A dict, not ``enum(value)``: the enum's call is Python code, ten times dearer, and a
    # week's Timeline decodes two members for each of its 10,000 runs.
    members = _MEMBERS.get(enum)
    if members is None:
        members = _MEMBERS[enum] = {member.value: member for member in enum}
    member = members.get(value)
    if not isinstance(member, enum):
        raise CodecError(f"unknown {what} {value!r}")
    return member


_MEMBERS: dict[type[Enum], dict[object, Enum]] = {}
"""Per enum, its members by stored value."""
