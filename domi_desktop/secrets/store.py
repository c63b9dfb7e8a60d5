"""Secret-name rules and the in-memory ``SecretStore`` (the interface is in ``ports``)."""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping

from domi_desktop.errors import SecretError

SERVICE = "domi-desktop"
"""The keyring service of every secret (``secret-tool lookup service domi-desktop username N``)."""

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
NAME_RULE = (
    "letters, digits, '_', '.' and '-', starting with a letter or a digit, at most 64 characters"
)


def validate_name(name: str) -> str:
    """Return ``name`` if it is a usable secret name, else raise ``SecretError`` saying the rule.

    Names are typed in the CLI and stored in schedules, so they stay shell- and URL-safe. Requiring
    a letter or digit first keeps them from looking like options and leaves ``_*`` to the store.
    """
    if not _NAME.fullmatch(name):
        raise SecretError(f"bad secret name {name!r}: use {NAME_RULE}")
    return name


def unknown_secret(name: str, where: str) -> SecretError:
    return SecretError(
        f"no secret named {name!r} in {where}; add it with `domi-desktop secret set {name}`"
    )


MIN_SECRET_LENGTH = 4
"""Shorter values are refused when set. Every value is masked in logs, and a value of one to three
characters turns up by chance everywhere (``ok``, ``200``, ``a``): the log would be stars, and where
they land would give the value away. A value that short protects nothing anyway."""


def check_value(name: str, value: str) -> None:
    # An empty secret cannot be masked and is almost always a paste that went wrong.
    if not value:
        raise SecretError(f"the value of secret {name!r} is empty")
    if len(value) < MIN_SECRET_LENGTH:
        raise SecretError(
            f"the value of secret {name!r} is {len(value)} character(s) long: secrets need at "
            f"least {MIN_SECRET_LENGTH}, as every value is masked wherever it shows up in a log"
        )


class MemorySecretStore:
    """A ``SecretStore`` in a dict: for tests and for the simulate/demo paths. Never persisted."""

    def __init__(self, values: Mapping[str, str] | None = None) -> None:
        self._lock = threading.Lock()
        self._values: dict[str, str] = {}
        for name, value in (values or {}).items():
            self.set(name, value)

    def get(self, name: str) -> str:
        validate_name(name)
        with self._lock:
            try:
                return self._values[name]
            except KeyError:
                raise unknown_secret(name, "the in-memory store") from None

    def set(self, name: str, value: str) -> None:
        validate_name(name)
        check_value(name, value)
        with self._lock:
            self._values[name] = value

    def delete(self, name: str) -> None:
        validate_name(name)
        with self._lock:
            if self._values.pop(name, None) is None:
                raise unknown_secret(name, "the in-memory store")

    def names(self) -> list[str]:
        with self._lock:
            return sorted(self._values)
