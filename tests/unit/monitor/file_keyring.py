"""A keyring backend kept in a JSON file named by ``DOMI_TEST_KEYRING``, for CLI subprocesses that
need secrets to exist (``PYTHON_KEYRING_BACKEND=tests.monitor.file_keyring.FileKeyring``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from keyring.backend import KeyringBackend


class FileKeyring(KeyringBackend):
    priority = 0  # type: ignore[assignment]  # chosen only by name

    def _path(self) -> Path:
        return Path(os.environ["DOMI_TEST_KEYRING"])

    def _items(self) -> dict[str, str]:
        try:
            items: dict[str, str] = json.loads(self._path().read_text())
        except FileNotFoundError:
            return {}
        return items

    def get_password(self, service: str, username: str) -> str | None:
        return self._items().get(f"{service}/{username}")

    def set_password(self, service: str, username: str, password: str) -> None:
        items = self._items()
        items[f"{service}/{username}"] = password
        self._path().write_text(json.dumps(items))

    def delete_password(self, service: str, username: str) -> None:
        items = self._items()
        del items[f"{service}/{username}"]
        self._path().write_text(json.dumps(items))


# The store uses OS keyrings only (never a plaintext file): this one, for tests, poses as one.
FileKeyring.__module__ = "keyring.backends.SecretService"
