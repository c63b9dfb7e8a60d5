"""The app's own settings: a small JSON file next to the database, read leniently.

A settings file is something users edit, copy between machines and sync; a bad one must never keep
the app from starting. So reading falls back field by field to the defaults, with a warning in the
log naming what was wrong, and writing replaces the file in one step.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from domi_desktop.cron import LOCAL, known_zone
from domi_desktop.errors import SecretError
from domi_desktop.model import Alerts
from domi_desktop.paths import ensure_private_dir
from domi_desktop.scheduler.burst import DEFAULT_LIMIT as DEFAULT_BURST
from domi_desktop.secrets import validate_name

log = logging.getLogger(__name__)

SETTINGS_FILENAME = "settings.json"

LANGUAGES = {"en": "English", "zh": "简体中文"}
"""The languages of the UI, by code, each named in itself."""


@dataclass(frozen=True)
class AppSettings:
    start_at_login: bool = False
    """The user's wish; the login entry itself is the autostart backend's (the OS's) truth."""
    notify_late: bool = True
    """Late fires and catch-ups after a wake."""
    notify_failures: bool = True
    notify_successes: bool = False
    default_zone: str = LOCAL
    """The zone a new schedule starts with: an IANA name or ``"local"``."""
    language: str = "en"
    """A key of ``LANGUAGES``."""
    catch_up_burst: int = DEFAULT_BURST
    """After a wake, at most this many catch-up runs at once; the rest follow in due order."""
    alert_notify_every: int = 0
    """The default alerts of a schedule without its own (0: off): a reminder every N failures."""
    alert_cooldown_hours: int = 24
    """A reminder of the same error once this many hours passed (0: never)."""
    alert_notify_recovery: bool = True
    alert_auto_pause_after: int = 0
    """Pause a schedule after this many failures in a row (0: never)."""
    alert_stale_after_hours: int = 0
    """Notify when a schedule has not succeeded for this many hours (0: never)."""
    healthchecks_key: str = ""
    """The secret name of a Healthchecks project API key for this machine's heartbeat check
    (empty: none); schedules name their own in their monitor policy."""
    healthchecks_api: str = ""
    """A self-hosted Healthchecks (empty: https://healthchecks.io)."""
    heartbeat_url: str = ""
    """The ping URL of a heartbeat check the user made (instead of an API key)."""
    heartbeat_hours: int = 72
    """The heartbeat check's period: a machine silent this long (lost, dead) is said down."""

    def alerts(self) -> Alerts:
        """The alerts of every schedule that has none of its own."""
        return Alerts(
            notify_every=self.alert_notify_every or None,
            cooldown=(
                timedelta(hours=self.alert_cooldown_hours) if self.alert_cooldown_hours else None
            ),
            notify_recovery=self.alert_notify_recovery,
            auto_pause_after=self.alert_auto_pause_after or None,
            stale_after=(
                timedelta(hours=self.alert_stale_after_hours)
                if self.alert_stale_after_hours
                else None
            ),
        )


def settings_path(data_dir: Path) -> Path:
    return data_dir / SETTINGS_FILENAME


def load_settings(path: Path) -> AppSettings:
    """The settings in ``path``; defaults for a missing file, and for what cannot be used.

    A file that is unreadable or not a JSON object gives all defaults; a field of the wrong type or
    an unsupported value (a language we have no catalog for, a zone this machine does not know)
    gives that field's default. Each is logged as a warning. Unknown keys are ignored: a newer
    release may have written them.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return AppSettings()
    except (OSError, UnicodeDecodeError) as error:
        log.warning("cannot read the settings %s (%s); using the defaults", path, error)
        return AppSettings()
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as error:
        # ValueError: not JSON, or a number of more digits than Python converts; RecursionError:
        # arrays nested thousands deep.
        log.warning("the settings %s cannot be read (%s); using the defaults", path,
                    _short(str(error)))  # fmt: skip
        return AppSettings()
    if not isinstance(data, dict):
        log.warning("the settings %s are not a JSON object; using the defaults", path)
        return AppSettings()
    defaults = AppSettings()
    values: dict[str, Any] = {}
    for field in fields(AppSettings):
        if field.name not in data:
            continue
        value = data[field.name]
        default = getattr(defaults, field.name)
        # bool is an int subclass and JSON has both: compare the exact type, not isinstance.
        usable = (
            type(value) is type(default)
            and _text_ok(value)
            and _VALID.get(field.name, _anything)(value)
        )
        if usable:
            values[field.name] = value
        else:
            log.warning("the settings %s: %s = %s is not usable; using %r", path, field.name,
                        _short(repr(value)), default)  # fmt: skip
    return AppSettings(**values)


def save_settings(path: Path, settings: AppSettings) -> None:
    """Write ``settings`` to ``path`` (mode 0600) atomically: a crash leaves the old file or the new.

    Raises ``OSError`` when the file cannot be written; the previous file is then left as it was.
    """
    ensure_private_dir(path.parent)
    text = json.dumps(asdict(settings), indent=2, ensure_ascii=False) + "\n"
    # mkstemp creates the file with mode 0600, so the settings are never readable by others.
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _anything(_value: Any) -> bool:
    return True


def _text_ok(value: Any) -> bool:
    """A string must be text (a lone surrogate from a ``\\udc80`` escape is not): the log, the
    keyring and the network all refuse it later, far from here."""
    if not isinstance(value, str):
        return True
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _short(text: str) -> str:
    """A value in the log's one line: a huge one is cut (its start says what it is)."""
    return text if len(text) <= 80 else f"{text[:60]}... ({len(text):,} characters)"


def _secret_name(name: str) -> bool:
    if not name:
        return True
    try:
        validate_name(name)
    except SecretError:
        return False
    return True


def _http_url(url: str) -> bool:
    if not url:
        return True
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.netloc)


YEAR_HOURS = 24 * 366
MANY = 1_000_000


_VALID: dict[str, Callable[[Any], bool]] = {
    "catch_up_burst": lambda count: 1 <= count <= 1000,
    # Bounded: a count or a span of hours past these says nothing more, and a huge one
    # overflows a timedelta far from here.
    "alert_notify_every": lambda count: 0 <= count <= MANY,
    "alert_cooldown_hours": lambda hours: 0 <= hours <= YEAR_HOURS,
    "alert_auto_pause_after": lambda count: 0 <= count <= MANY,
    "alert_stale_after_hours": lambda hours: 0 <= hours <= YEAR_HOURS,
    "heartbeat_hours": lambda hours: 1 <= hours <= 24 * 365,
    "language": lambda code: code in LANGUAGES,
    "default_zone": known_zone,
    "healthchecks_key": _secret_name,
    "healthchecks_api": _http_url,
    "heartbeat_url": _http_url,
}
