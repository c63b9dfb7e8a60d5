"""Time zone names to ``tzinfo``: IANA names through zoneinfo, and ``local`` (the OS zone, now)."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import tzinfo
from functools import lru_cache
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from domi_desktop.errors import ZoneError

LOCAL = "local"

_cache: dict[str, ZoneInfo] = {}
_local_resolver: Callable[[], tzinfo] | None = None


def zone_for(tz: str | tzinfo) -> tzinfo:
    """A tzinfo for a zone name, ``"local"`` or a tzinfo; unknown names raise ``ZoneError``."""
    if not isinstance(tz, str):
        if isinstance(tz, tzinfo):
            return tz
        raise ZoneError(f"a time zone must be a name such as 'Europe/Riga', not {tz!r}")
    zone = _cache.get(tz)
    if zone is not None:
        return zone
    if tz == LOCAL:
        return local_zone()
    zone = _load(tz)
    _cache[tz] = zone
    return zone


@lru_cache(maxsize=512)
def known_zone(name: str) -> bool:
    """True when ``name`` is ``local`` or a zone this machine can load."""
    try:
        zone_for(name)
    except ZoneError:
        return False
    return True


def _load(name: str) -> ZoneInfo:
    if not name or len(name) > 255 or "\x00" in name or name.startswith(("/", ".")) or ".." in name:
        raise ZoneError(f"unknown time zone {name!r}; use an IANA name such as 'Europe/Riga'")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError) as error:
        hint = _suggest(name)
        raise ZoneError(f"unknown time zone {name!r}{hint}") from error


def _suggest(name: str) -> str:
    lowered = name.lower()
    for known in sorted(available_timezones()):
        if known.lower() == lowered or known.lower().endswith("/" + lowered):
            return f"; did you mean {known!r}?"
    return "; use an IANA name such as 'Europe/Riga'"


def set_local_resolver(resolver: Callable[[], tzinfo] | None) -> None:
    """Let the platform layer say what the OS zone is (e.g. from the Windows registry)."""
    global _local_resolver
    _local_resolver = resolver


def local_zone() -> tzinfo:
    """The OS zone as it is now: ``TZ``, then /etc/localtime, then /etc/timezone; UTC if none."""
    if _local_resolver is not None:
        return _local_resolver()
    name = local_zone_name()
    if name is not None:
        try:
            return zone_for(name)
        except ZoneError:
            pass
    localtime = Path("/etc/localtime")
    if localtime.is_file():
        with localtime.open("rb") as file:
            return ZoneInfo.from_file(file, key="localtime")
    return zone_for("UTC")


def local_zone_name() -> str | None:
    """The IANA name of the OS zone when it can be told, else ``None``."""
    env = os.environ.get("TZ", "").lstrip(":")
    if env:
        return env
    try:
        target = os.readlink("/etc/localtime")
    except OSError:
        target = ""
    marker = "zoneinfo/"
    if marker in target:
        return target.split(marker, 1)[1]
    try:
        text = Path("/etc/timezone").read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return text or None
