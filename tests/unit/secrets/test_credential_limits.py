"""The Windows Credential Manager holds at most 2,560 bytes per credential: checked before writing.

The limit follows the backend in use, so it is driven here, on any OS, by an in-memory backend that
presents itself as keyring's Windows one; a Secret Service one has no such limit.
"""

from __future__ import annotations

import json

import pytest
from keyring.backend import KeyringBackend

from domi_desktop.errors import SecretError
from domi_desktop.secrets import KeyringSecretStore
from domi_desktop.secrets.keyring_store import INDEX_USERNAME, WINDOWS_CREDENTIAL_BYTES


class _MemoryBackend(KeyringBackend):
    priority = 0  # type: ignore[assignment]  # never chosen by keyring itself

    def __init__(self) -> None:
        super().__init__()
        self.items: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.items.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.items[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        del self.items[(service, username)]


class WindowsLike(_MemoryBackend):
    def set_password(self, service: str, username: str, password: str) -> None:
        # What the real Credential Manager does past its limit: CredWrite fails, unexplained.
        if len(password.encode("utf-16-le")) > WINDOWS_CREDENTIAL_BYTES:
            raise OSError(87, "CredWrite", "The parameter is incorrect.")
        super().set_password(service, username, password)


class SecretServiceLike(_MemoryBackend):
    pass


WindowsLike.__module__ = "keyring.backends.Windows"
SecretServiceLike.__module__ = "keyring.backends.SecretService"

LIMIT_CHARS = WINDOWS_CREDENTIAL_BYTES // 2  # UTF-16: two bytes per ASCII character


def test_a_value_at_the_limit_is_stored_on_windows() -> None:
    backend = WindowsLike()
    store = KeyringSecretStore(backend=backend)
    store.set("cert", "x" * LIMIT_CHARS)
    assert store.get("cert") == "x" * LIMIT_CHARS


def test_a_value_one_character_over_is_refused_with_the_sizes_and_nothing_is_written() -> None:
    backend = WindowsLike()
    store = KeyringSecretStore(backend=backend)
    with pytest.raises(SecretError) as caught:
        store.set("cert", "x" * (LIMIT_CHARS + 1))
    assert str(caught.value) == (
        "the value of secret 'cert' takes 2,562 bytes in the OS keyring "
        "(keyring.backends.Windows.WindowsLike), which holds at most 2,560 bytes per item: "
        "store a shorter value"
    )
    assert backend.items == {}


def test_non_ascii_values_count_in_utf16_units() -> None:
    store = KeyringSecretStore(backend=WindowsLike())
    store.set("emoji", "🔑" * (WINDOWS_CREDENTIAL_BYTES // 4))  # a surrogate pair each: 4 bytes
    with pytest.raises(SecretError, match="2,564 bytes"):
        store.set("emoji", "🔑" * (WINDOWS_CREDENTIAL_BYTES // 4 + 1))


def test_a_name_that_would_push_the_index_over_the_limit_is_refused_before_its_value() -> None:
    backend = WindowsLike()
    store = KeyringSecretStore(backend=backend)
    names = [f"{i:02d}" + "n" * 62 for i in range(18)]  # 64-character names
    for name in names:
        store.set(name, "value-1234")
    index = backend.items[("domi-desktop", INDEX_USERNAME)]
    assert len(index.encode("utf-16-le")) <= WINDOWS_CREDENTIAL_BYTES
    extra = "zz" + "n" * 62
    with pytest.raises(SecretError) as caught:
        store.set(extra, "value-1234")
    message = str(caught.value)
    assert message.startswith(f"the list of secret names with {extra!r} added takes ")
    assert message.endswith(
        "which holds at most 2,560 bytes per item: delete secrets you no longer use "
        "(`domi-desktop secret delete NAME`) or use shorter names"
    )
    assert ("domi-desktop", extra) not in backend.items
    assert json.loads(backend.items[("domi-desktop", INDEX_USERNAME)]) == sorted(names)
    # Replacing a value whose name is listed already does not grow the index.
    store.set(names[0], "new-value")
    assert store.get(names[0]) == "new-value"


def test_other_keyrings_take_longer_values() -> None:
    store = KeyringSecretStore(backend=SecretServiceLike())
    store.set("pem", "x" * 10_000)
    assert store.get("pem") == "x" * 10_000
