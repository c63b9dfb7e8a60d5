"""Secrets in the OS keyring: Secret Service or KWallet, macOS Keychain, Windows Credential Manager.

``keyring`` is imported where it is used: importing it costs ~120 ms (its plugin discovery) of the
1 s start-to-tray budget, and the app needs it only when a secret is read or written.
"""

from __future__ import annotations

import copy
import json
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from domi_desktop.errors import SecretError
from domi_desktop.secrets.store import SERVICE, check_value, unknown_secret, validate_name

if TYPE_CHECKING:
    from keyring.backend import KeyringBackend

T = TypeVar("T")

INDEX_USERNAME = "__domi_index__"
"""keyring cannot list items, so the names (never the values) are kept as a JSON list in one more
item. ``validate_name`` rejects names starting with ``_``, so no secret can collide with it."""

# Backends that hand values to the operating system's own protected store. Everything else is
# refused: keyring's ``fail`` and ``null`` backends, and keyrings.alt's plaintext or file backends,
# which installing keyrings.alt silently makes the default (TESTBED.md).
_OS_KEYRING_MODULES = frozenset(
    {
        "keyring.backends.SecretService",
        "keyring.backends.libsecret",
        "keyring.backends.kwallet",
        "keyring.backends.macOS",
        "keyring.backends.Windows",
    }
)

_ONE_AT_A_TIME = threading.Lock()
"""Every call into the OS keyring from this process, one after the other. Each call of keyring's
Secret Service backend opens a D-Bus connection of its own; at a resume the jobs' reads and the
monitor's met, and a loaded gnome-keyring (42) answered one that its default collection was not
there, then aborted on a GLib assertion about a client it no longer knew."""

DEFAULT_COLLECTION = "/org/freedesktop/secrets/aliases/default"
"""The Secret Service's default collection (its login keyring), by its alias."""
READ_RETRIES = (0.2, 0.6, 1.5)
"""Seconds between the tries of a read that failed: four tries in all."""

WINDOWS_CREDENTIAL_BYTES = 2560
"""CRED_MAX_CREDENTIAL_BLOB_SIZE: the most one Windows credential holds. keyring stores a value as
UTF-16, so that is 1,280 characters of plain ASCII. Past it ``CredWrite`` fails with a bare
"invalid parameter"; the store says what is wrong before it gets there."""

# Limits of one stored item, by backend module: the check follows the backend in use, so it can be
# driven on any OS by a backend of that module.
_ITEM_LIMITS = {"keyring.backends.Windows": (WINDOWS_CREDENTIAL_BYTES, "utf-16-le")}

NO_OS_KEYRING_HELP = (
    "install and unlock gnome-keyring or KWallet (on Linux a desktop session starts them; "
    "headless: `gnome-keyring-daemon --unlock` inside a D-Bus session), or use the macOS Keychain "
    "or the Windows Credential Manager; domi-desktop never keeps secrets in plain text"
)


def backend_name(backend: KeyringBackend) -> str:
    return f"{type(backend).__module__}.{type(backend).__qualname__}"


def os_keyring(backend: KeyringBackend) -> KeyringBackend:
    """``backend`` itself, or for keyring's chainer its first OS keyring; else ``SecretError``.

    The chainer reads from every viable backend in turn, so it is unwrapped rather than trusted:
    a plaintext backend further down the chain must never be read or written.
    """
    from keyring.backends.chainer import ChainerBackend

    candidates: list[KeyringBackend] = (
        list(ChainerBackend.backends) if isinstance(backend, ChainerBackend) else [backend]
    )
    for candidate in candidates:
        if type(candidate).__module__ in _OS_KEYRING_MODULES:
            return candidate
    names = ", ".join(backend_name(c) for c in candidates) or backend_name(backend)
    raise SecretError(
        f"no OS keyring is available (keyring backend: {names}): {NO_OS_KEYRING_HELP}"
    )


def _cause(error: Exception) -> str:
    from keyring.errors import InitError, KeyringLocked

    cause = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    if isinstance(error, KeyringLocked | InitError):
        # Both mean a locked collection whose unlock prompt was dismissed or could not be shown.
        cause += "; unlock the keyring (log in to the desktop session) and try again"
    return cause


class KeyringSecretStore:
    """A ``SecretStore`` on the ``keyring`` library, service ``domi-desktop``.

    ``backend`` defaults to keyring's own choice (its config file and ``PYTHON_KEYRING_BACKEND``
    apply), resolved at first use so that constructing the store never fails or blocks. Every
    failure is a ``SecretError`` naming the cause; there is no fallback of any kind.

    The index of names is updated under a lock, so one process is safe; the CLI goes through the
    running app when there is one, so two writers at once would need two concurrent CLI calls.
    """

    def __init__(self, backend: KeyringBackend | None = None) -> None:
        self._requested = backend
        self._resolved: KeyringBackend | None = None
        self._reading: KeyringBackend | None = None
        self._lock = threading.Lock()

    def get(self, name: str) -> str:
        validate_name(name)
        value = self._read(f"read secret {name!r}", lambda b: b.get_password(SERVICE, name))
        if value is None:
            raise unknown_secret(name, "the OS keyring")
        return value

    def set(self, name: str, value: str) -> None:
        validate_name(name)
        check_value(name, value)
        self._check_size(value, f"the value of secret {name!r}", "store a shorter value")
        with self._lock:
            names = self._read_index()
            new_names = names if name in names else [*names, name]
            # Checked before the value is written: a value stored without its name in the index
            # could never be listed or deleted by name.
            self._check_size(
                _index_text(new_names),
                f"the list of secret names with {name!r} added",
                "delete secrets you no longer use (`domi-desktop secret delete NAME`) or use shorter "
                "names",
            )
            self._call(f"store secret {name!r}", lambda b: b.set_password(SERVICE, name, value))
            if new_names is not names:
                self._write_index(new_names)

    def delete(self, name: str) -> None:
        from keyring.errors import PasswordDeleteError

        validate_name(name)

        def delete_value(backend: KeyringBackend) -> bool:
            try:
                backend.delete_password(SERVICE, name)
            except PasswordDeleteError:
                return False
            return True

        with self._lock:
            deleted = self._call(f"delete secret {name!r}", delete_value)
            names = self._read_index()
            if name in names:
                # Also when the value was already gone (removed with secret-tool, say).
                self._write_index([n for n in names if n != name])
            elif not deleted:
                raise unknown_secret(name, "the OS keyring")

    def names(self) -> list[str]:
        return self._read_index()

    def _read_index(self) -> list[str]:
        raw = self._call(
            "read the list of secret names", lambda b: b.get_password(SERVICE, INDEX_USERNAME)
        )
        if raw is None:
            return []
        try:
            names = json.loads(raw)
        except ValueError:
            names = None
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise SecretError(
                f"the list of secret names in the OS keyring is damaged; remove it (`secret-tool "
                f"clear service {SERVICE} username {INDEX_USERNAME}`) and set the secrets again"
            )
        return sorted(names)

    def _write_index(self, names: list[str]) -> None:
        raw = _index_text(names)
        self._call(
            "update the list of secret names",
            lambda b: b.set_password(SERVICE, INDEX_USERNAME, raw),
        )

    def _check_size(self, text: str, what: str, remedy: str) -> None:
        backend = self._backend()
        limit = _ITEM_LIMITS.get(type(backend).__module__)
        if limit is None:
            return
        most, encoding = limit
        size = len(text.encode(encoding))
        if size > most:
            raise SecretError(
                f"{what} takes {size:,} bytes in the OS keyring ({backend_name(backend)}), which "
                f"holds at most {most:,} bytes per item: {remedy}"
            )

    def _backend(self) -> KeyringBackend:
        if self._resolved is None:
            if self._requested is None:
                import keyring

                self._resolved = os_keyring(keyring.get_keyring())
            else:
                self._resolved = os_keyring(self._requested)
        return self._resolved

    def _call(
        self,
        what: str,
        operation: Callable[[KeyringBackend], T],
        backend: KeyringBackend | None = None,
    ) -> T:
        backend = backend or self._backend()
        try:
            with _ONE_AT_A_TIME:
                return operation(backend)
        # Backends raise keyring errors, but also D-Bus (jeepney, secretstorage), OS and runtime
        # errors of their own: each one means "not available" to the caller.
        except Exception as error:
            raise SecretError(
                f"could not {what} in the OS keyring ({backend_name(backend)}): {_cause(error)}"
            ) from error

    def _read(self, what: str, operation: Callable[[KeyringBackend], T]) -> T:
        """A read, which a job or a ping makes unattended: it never offers to create a keyring,
        and a failure other than a locked keyring is tried again a moment later (gnome-keyring,
        busy, once answered that its default collection was not there, in 1 of 600 reads)."""
        from keyring.errors import KeyringLocked

        if self._reading is None:
            self._reading = _reader(self._backend())
        reader = self._reading
        for pause in READ_RETRIES:
            try:
                return self._call(what, operation, reader)
            except SecretError as error:
                if isinstance(error.__cause__, KeyringLocked):
                    raise  # its unlock prompt was dismissed: asking again would prompt again
                time.sleep(pause)
        return self._call(what, operation, reader)


def _reader(backend: KeyringBackend) -> KeyringBackend:
    """``backend`` for reads: Secret Service's looks the default collection up and, where that is
    not found, fails; by default it would prompt the person to create one."""
    if type(backend).__module__ != "keyring.backends.SecretService":
        return backend
    reader = copy.copy(backend)
    reader.preferred_collection = DEFAULT_COLLECTION  # type: ignore[attr-defined]
    return reader


def _index_text(names: list[str]) -> str:
    return json.dumps(sorted(names))
