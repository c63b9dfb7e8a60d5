"""The one-off instant, the skip/snooze hold and ``background`` in the policies' JSON (``codec``).

Said only when set, so rows written before them read the same and need no migration. Instants
are integer microseconds since the epoch, like every stored time: exact, as the hold's due must
equal a run's due.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from domi_desktop.model import Hold, Policies

if TYPE_CHECKING:
    from domi_desktop.store.codec import _Reader

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _micros(value: datetime) -> int:
    return (value - _EPOCH) // timedelta(microseconds=1)


def _instant(reader: _Reader, key: str) -> datetime | None:
    from domi_desktop.store.codec import CodecError

    micros = reader.optional_integer(key)
    if micros is None:
        return None
    try:
        return _EPOCH + timedelta(microseconds=micros)
    except OverflowError:
        raise CodecError(f"policies: {key!r} is out of range ({micros})") from None


def once_document(policies: Policies) -> dict[str, Any]:
    found: dict[str, Any] = {"background": True} if policies.background else {}
    if policies.once_at is not None:
        found["once_at"] = _micros(policies.once_at)
    hold = policies.hold
    if hold is not None:
        until = None if hold.until is None else _micros(hold.until)
        found["hold"] = {"due": _micros(hold.due), "until": until}
    return found


def decode_once(reader: _Reader) -> tuple[datetime | None, Hold | None, bool]:
    """``once_at``, ``hold`` and ``background`` of a policies document."""
    from domi_desktop.store.codec import CodecError

    hold = None
    part = reader.part("hold")
    if part is not None:
        due = _instant(part, "due")
        if due is None:
            raise CodecError("policies.hold lacks 'due'")
        hold = Hold(due=due, until=_instant(part, "until"))
    return _instant(reader, "once_at"), hold, reader.flag("background", False)
