from __future__ import annotations

from collections.abc import Iterator

import pytest

from domi_desktop.cron import set_local_resolver
from domi_desktop.platform.timezone import install_os_zone


@pytest.fixture(autouse=True)
def local_is_the_os_zone() -> Iterator[None]:
    """``local`` is the OS zone in every test, as the entry points make it; a test may install
    another resolver over it."""
    install_os_zone()
    yield
    set_local_resolver(None)
