"""A real gnome-keyring for the tests marked ``keyring``, and the stores every contract test runs on.

``make test-desktop`` runs those tests inside ``dbus-run-session`` with a throw-away HOME; each test
gets a fresh ``gnome-keyring-daemon`` unlocked with a throw-away password, its store in the test's
own temp dir, and keyring's SecretService backend selected explicitly (no global keyring state).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from keyring.backend import KeyringBackend
from keyring.backends.SecretService import Keyring as SecretServiceKeyring

from domi_desktop.ports import SecretStore
from domi_desktop.secrets import KeyringSecretStore, MemorySecretStore
from tests.support.processes import stop

SECRETS_BUS_NAME = "org.freedesktop.secrets"


def _bus_name_has_owner(name: str) -> bool:
    # jeepney is Linux's (a conftest is imported on every OS, before markers deselect anything).
    from jeepney import DBus
    from jeepney.io.blocking import open_dbus_connection

    with open_dbus_connection(bus="SESSION") as connection:
        reply = connection.send_and_get_reply(DBus().NameHasOwner(name), timeout=5)
    return bool(reply.body[0])


def _poll(condition: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


@pytest.fixture
def gnome_keyring(tmp_path: Path) -> Iterator[Path]:
    """A running, unlocked daemon on the session bus; yields where it keeps its encrypted store."""
    if not os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
        pytest.skip("needs a session bus: run under dbus-run-session (make test-desktop)")
    daemon = shutil.which("gnome-keyring-daemon")
    if daemon is None:
        pytest.skip("gnome-keyring-daemon is not installed (make system-deps)")
    # The previous test's daemon releases the name a moment after it exits.
    if not _poll(lambda: not _bus_name_has_owner(SECRETS_BUS_NAME), 30):
        pytest.skip("another secret service owns this bus: refusing to touch a real keyring")

    data_dir = tmp_path / "keyring-data"
    control_dir = tmp_path / "keyring-control"
    control_dir.mkdir(mode=0o700)
    out, err = tmp_path / "gnome-keyring.out", tmp_path / "gnome-keyring.err"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = subprocess.Popen(
            [
                daemon,
                "--foreground",
                "--unlock",
                "--components=secrets",
                f"--control-directory={control_dir}",
            ],
            stdin=subprocess.PIPE,
            stdout=stdout,
            stderr=stderr,
            env={**os.environ, "XDG_DATA_HOME": str(data_dir)},
        )
    try:
        assert process.stdin is not None
        with process.stdin:
            process.stdin.write(b"throw-away-password")  # --unlock reads it from stdin

        def ready() -> bool:
            if process.poll() is not None:
                pytest.fail(f"gnome-keyring-daemon exited {process.returncode}: {err.read_text()}")
            return "GNOME_KEYRING_CONTROL=" in out.read_text() and _bus_name_has_owner(
                SECRETS_BUS_NAME
            )

        if not _poll(ready, 60):  # generous: loaded machines
            pytest.fail(f"gnome-keyring-daemon did not get ready: {err.read_text()}")
        with pytest.MonkeyPatch.context() as patch:
            for line in out.read_text().splitlines():
                name, equals, value = line.partition("=")
                if equals:
                    patch.setenv(name, value)
            yield data_dir
    finally:
        stop(process)  # killed if it does not quit


@pytest.fixture
def secret_service(gnome_keyring: Path) -> KeyringBackend:
    """keyring's SecretService backend, selected explicitly, talking to the test's daemon."""
    return SecretServiceKeyring()


@pytest.fixture(params=["memory", pytest.param("keyring", marks=pytest.mark.keyring)])
def store(request: pytest.FixtureRequest) -> SecretStore:
    """Each store, for the tests every ``SecretStore`` must pass."""
    if request.param == "memory":
        return MemorySecretStore()
    return KeyringSecretStore(backend=request.getfixturevalue("secret_service"))
