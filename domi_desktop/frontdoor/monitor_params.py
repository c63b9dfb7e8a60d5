"""``policies.monitor`` on the wire: the outside monitors of a schedule, checked where typed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

from domi_desktop.errors import ParamError, SecretError
from domi_desktop.model import Monitor
from domi_desktop.ports import SecretStore
from domi_desktop.secrets import validate_name

MIN_GRACE = timedelta(minutes=1)
MAX_GRACE = timedelta(days=365)
"""Healthchecks' own bounds of a check's grace period (60 s to a year)."""

_URLS = ("healthchecks_url", "healthchecks_api", "webhook")


def monitor_params(value: Mapping[str, Any], base: Monitor) -> dict[str, Any]:
    """``policies.monitor`` as a change of the policies: ``base`` when it is not given."""
    return {"monitor": parse_monitor(value["monitor"], base) if "monitor" in value else base}


def parse_monitor(value: Any, base: Monitor) -> Monitor:
    """``base`` with what ``value`` sets; a key set to null clears it. ``ParamError`` names the
    key that cannot be used."""
    p = "policies.monitor."
    if value is None:
        return Monitor()
    if not isinstance(value, dict):
        raise ParamError("policies.monitor", "must be an object")
    unknown = set(value) - {*_URLS, "healthchecks_key", "grace"}
    if unknown:
        raise ParamError(f"{p}{sorted(unknown)[0]}", "is not a monitor setting")
    changes: dict[str, Any] = {}
    for name in _URLS:
        if name in value:
            changes[name] = _url(value[name], f"{p}{name}")
    if "healthchecks_key" in value:
        key = value["healthchecks_key"]
        if key is not None:
            if not isinstance(key, str):
                raise ParamError(f"{p}healthchecks_key", "must be the name of a secret")
            try:
                validate_name(key)
            except SecretError as error:
                raise ParamError(f"{p}healthchecks_key", str(error)) from None
        changes["healthchecks_key"] = key
    if "grace" in value:
        grace = value["grace"]
        if isinstance(grace, bool) or not isinstance(grace, int | float):
            raise ParamError(f"{p}grace", "must be a number of seconds")
        if not MIN_GRACE.total_seconds() <= grace <= MAX_GRACE.total_seconds():
            raise ParamError(f"{p}grace", "must be between 60 seconds and a year")
        changes["grace"] = timedelta(seconds=grace)
    monitor = replace(base, **changes)
    if not (monitor.healthchecks_url or monitor.healthchecks_key or monitor.webhook):
        return Monitor()  # nothing watches it: a grace or an API URL alone says nothing
    if monitor.healthchecks_url and monitor.healthchecks_key:
        raise ParamError(
            f"{p}healthchecks_key",
            "give a ping URL or an API key, not both (with a key domi makes the check itself)",
        )
    return monitor


def check_key_secret(name: str, secrets: SecretStore) -> None:
    """``ParamError`` unless ``secrets`` has a secret named ``name``, listing those it has. A
    keyring that cannot be listed now (none on this machine, locked) cannot say: the name is
    taken, and the monitor waits for the secret."""
    try:
        names = secrets.names()
    except SecretError:
        return
    if name in names:
        return
    # The name typed is not repeated: what lands here is often the key itself, pasted.
    choices = ", ".join(names) if names else "none yet"
    raise ParamError(
        "policies.monitor.healthchecks_key",
        f"no secret has this name (the secrets: {choices}); store the API key with "
        "`domi-desktop secret set NAME` and give NAME here",
    )


def _url(value: Any, param: str) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ParamError(param, "must be a URL")
    try:
        parts = urlsplit(value)
    except ValueError as error:  # an unclosed [ of an IPv6 host, a netloc that NFKC changes
        raise ParamError(
            param, f"must be an http:// or https:// URL, not {value!r}: {error}"
        ) from None
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ParamError(param, f"must be an http:// or https:// URL, not {value!r}")
    if parts.username or parts.password:
        # The URL is stored in the schedule and shown in lists: a password has no place there.
        raise ParamError(param, "must not carry a user name or password")
    return value
