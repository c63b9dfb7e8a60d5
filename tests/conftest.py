"""Fixtures shared by every test directory.

postgresql_dsn   (session) a DSN for psycopg 3 to a throw-away PostgreSQL server on a Unix
                 socket (tests/support/pg.py); skipped only when the server binaries are not installed
local_is_the_os_zone   (autouse) ``local`` resolves to the OS zone, as the entry points make it

Platform markers (pyproject): a test marked ``linux_only``, ``posix_only`` or ``windows_only`` is
deselected elsewhere, so a run's skips are only what could not be tested where it should run (on
Wine, what Wine cannot do). Tests of the PostgreSQL store are ``linux_only``: their server is
Debian's. tests/desktop/ (a session bus, Xvfb's tray, jeepney) is not even collected off Linux: a
conftest is imported before any marker can deselect its tests.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from hypothesis import settings

from domi_desktop.platform.timezone import install_os_zone
from tests.support import pg

if TYPE_CHECKING:
    from PySide6.QtCore import QCoreApplication

# A test that leaves a thread or a child process running fails, naming it (tests/support/leaks.py).
pytest_plugins = ("tests.support.leaks",)

# No test asserts a duration, hypothesis's included: its default 200 ms deadline per example
# failed a store test on Windows' CPython under Wine on a loaded machine (642 ms, then 61 ms).
settings.register_profile("domi", deadline=None)
settings.load_profile("domi")

collect_ignore = [] if sys.platform.startswith("linux") else ["desktop"]

PLATFORM_MARKERS = {
    "linux_only": sys.platform.startswith("linux"),
    "posix_only": os.name == "posix",
    "windows_only": sys.platform == "win32",
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    kept, elsewhere = [], []
    for item in items:
        if "postgresql_dsn" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.linux_only)
        here = all(
            applies or item.get_closest_marker(marker) is None
            for marker, applies in PLATFORM_MARKERS.items()
        )
        (kept if here else elsewhere).append(item)
    if elsewhere:
        config.hook.pytest_deselected(items=elsewhere)
        items[:] = kept


@pytest.fixture(scope="session")
def postgresql_dsn() -> Iterator[str]:
    bin_dir = pg.find_bin_dir()
    if bin_dir is None:
        pytest.skip(
            "PostgreSQL server binaries not found (/usr/lib/postgresql/*/bin/initdb); "
            "install the Debian package `postgresql`"
        )
    with pg.running_server(bin_dir) as server:
        print(f"PostgreSQL {bin_dir.parent.name} started in {server.start_seconds:.2f} s")
        yield server.dsn


@pytest.fixture(autouse=True)
def local_is_the_os_zone() -> Iterator[None]:
    """``local`` is the OS zone in every test, as the entry points make it; a test may install
    another resolver over it. Put back after the test too: a window's queued events (a language
    change) may still be delivered while fixtures end."""
    install_os_zone()
    yield
    install_os_zone()


@pytest.fixture
def core_app() -> Iterator[QCoreApplication]:
    """The process's Qt application, for tests that turn a Qt loop without widgets. Made as
    pytest-qt's ``qapp`` would make it (a ``QApplication``): a later widget test in the same
    process cannot use a core-only one, whatever order the tests run in."""
    from PySide6.QtCore import QCoreApplication
    from PySide6.QtWidgets import QApplication

    instance = QCoreApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(instance, QCoreApplication)
    yield instance
