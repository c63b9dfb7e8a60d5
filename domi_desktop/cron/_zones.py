"""Time zone names to ``tzinfo``: IANA names through zoneinfo, and ``local`` (the OS zone, now).

The core never asks the OS which zone it is in: the platform layer installs a resolver at start-up
(``set_local_resolver``) and ``local`` asks it again at each evaluation, so a laptop that travels
follows its new zone.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import tzinfo
from functools import lru_cache
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
    if name == LOCAL:
        return True
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
    """Install what ``local`` means: a callable giving the OS zone as it is now (the platform
    layer's, at start-up; a fixed zone in tests). ``None`` uninstalls it."""
    global _local_resolver
    _local_resolver = resolver


def local_zone() -> tzinfo:
    """The OS zone as the installed resolver reports it now; ``ZoneError`` when none is."""
    if _local_resolver is None:
        raise ZoneError(
            "the OS time zone ('local') is not known here: the application installs it at "
            "start-up (domi_desktop.platform.timezone.install_os_zone)"
        )
    return _local_resolver()
