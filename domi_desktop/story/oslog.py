"""The OS's own record of sleeps, parsed (pure: the text is handed in; the commands that print it
run in ``platform.sleeplog``). A line that cannot be read is passed over with a note, never raised.

- Linux: ``journalctl -o json`` entries of systemd-sleep, by the catalog's message ids ("System
  sleep state @SLEEP@ entered" / "left"); a sleep and its wake share a boot id.
- macOS: ``pmset -g log``: ``Sleep`` lines, then ``Wake``; a ``DarkWake`` (maintenance with the
  screen off) in between does not end the sleep for the person who closed the lid.
- Windows: ``wevtutil qe System /f:xml``: Kernel-Power 42 (entering sleep), 107 (resumed).
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from datetime import UTC, datetime

from domi_desktop.story import Parsed, Sleep

SLEEP_START_ID = "6bbd95ee977941e497c48be27c254128"
SLEEP_STOP_ID = "8811e6df2a8e40f58a94cea26f8ebf14"
"""systemd's catalog: ``journalctl --list-catalog`` (SD_MESSAGE_SLEEP_START / _STOP)."""

KERNEL_POWER = "Microsoft-Windows-Kernel-Power"
ENTERING_SLEEP, RESUMED = 42, 107
EVENT_QUERY = (
    f"*[System[Provider[@Name='{KERNEL_POWER}'] "
    f"and (EventID={ENTERING_SLEEP} or EventID={RESUMED})]]"
)
_EVENT_NS = "{http://schemas.microsoft.com/win/2004/08/events/event}"
_PMSET_LINE = re.compile(
    r"(?P<at>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d{4})\s+(?P<domain>[A-Za-z]+)\s"
)


def _note(notes: list[str], where: str, why: str) -> None:
    notes.append(f"{where}: {why}")


def _pair(events: list[tuple[datetime, bool, str]], notes: list[str]) -> Parsed:
    """(instant, went to sleep?, what it belongs to) in order -> the sleeps: a sleep with no wake
    (a battery that died, a reboot: another boot) is passed over, as is a wake with no sleep."""
    sleeps: list[Sleep] = []
    began: tuple[datetime, str] | None = None
    for at, sleeping, scope in sorted(events, key=lambda event: event[0]):
        if sleeping:
            if began is not None and began[1] != scope:
                _note(notes, began[0].isoformat(), "a sleep with no wake on record")
            if began is None or began[1] != scope:
                began = (at, scope)  # a second sleep before a wake (pmset: after a DarkWake)
            continue
        if began is None or began[1] != scope:
            if began is not None:
                _note(notes, began[0].isoformat(), "a sleep with no wake on record")
            _note(notes, at.isoformat(), "a wake with no sleep on record")
            began = None
            continue
        if at > began[0]:
            sleeps.append(Sleep(began[0], at))
        began = None
    if began is not None:
        _note(notes, began[0].isoformat(), "a sleep with no wake yet")
    return Parsed(tuple(sleeps), tuple(notes))


def parse_journal(text: str) -> Parsed:
    """``journalctl -o json`` output (one JSON object a line)."""
    notes: list[str] = []
    events: list[tuple[datetime, bool, str]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            message_id = entry.get("MESSAGE_ID")
            if message_id not in (SLEEP_START_ID, SLEEP_STOP_ID):
                continue
            stamp = int(entry["__REALTIME_TIMESTAMP"])
            at = datetime.fromtimestamp(stamp / 1_000_000, UTC)
        except (ValueError, TypeError, KeyError, AttributeError, OverflowError, OSError) as error:
            _note(notes, f"journal line {number}", f"not a journal entry ({error})")
            continue
        events.append((at, message_id == SLEEP_START_ID, str(entry.get("_BOOT_ID", ""))))
    return _pair(events, notes)


def parse_pmset(text: str) -> Parsed:
    """``pmset -g log`` output, oldest first; lines of other domains (Assertions, Charge...)
    are ignored. A ``Start`` line is a fresh boot: a sleep before it never woke."""
    notes: list[str] = []
    events: list[tuple[datetime, bool, str]] = []
    boot = 0
    for number, line in enumerate(text.splitlines(), start=1):
        matched = _PMSET_LINE.match(line)
        if matched is None or matched["domain"] not in ("Sleep", "Wake", "Start"):
            continue  # DarkWake, Assertions, Charge, a header...
        try:
            at = datetime.strptime(matched["at"], "%Y-%m-%d %H:%M:%S %z")
        except ValueError as error:
            _note(notes, f"pmset line {number}", f"unreadable time ({error})")
            continue
        if matched["domain"] == "Start":
            boot += 1
        else:
            events.append((at, matched["domain"] == "Sleep", str(boot)))
    return _pair(events, notes)


def parse_events_xml(text: str) -> Parsed:
    """``wevtutil qe System /q:EVENT_QUERY /f:xml``: ``<Event>`` elements one after another, with
    no root element around them."""
    notes: list[str] = []
    events: list[tuple[datetime, bool, str]] = []
    try:
        root = ET.fromstring(f"<Events>{text}</Events>")
    except ET.ParseError as error:
        return Parsed((), (f"event log: not XML ({error})",))
    for number, event in enumerate(root, start=1):
        system = event.find(f"{_EVENT_NS}System")
        provider = None if system is None else system.find(f"{_EVENT_NS}Provider")
        event_id = None if system is None else system.findtext(f"{_EVENT_NS}EventID")
        created = None if system is None else system.find(f"{_EVENT_NS}TimeCreated")
        if provider is None or provider.get("Name") != KERNEL_POWER:
            continue
        try:
            kind = int(event_id or "")
            at = datetime.fromisoformat(
                created.get("SystemTime", "") if created is not None else ""
            )
        except ValueError as error:
            _note(notes, f"event {number}", f"unreadable ({error})")
            continue
        if at.tzinfo is None:
            at = at.replace(tzinfo=UTC)  # wevtutil writes UTC
        if kind in (ENTERING_SLEEP, RESUMED):
            events.append((at, kind == ENTERING_SLEEP, "boot"))
    return _pair(events, notes)
