from __future__ import annotations

import pytest

from tests.unit.platform.fakes import MemoryRegistry


@pytest.fixture
def registry() -> MemoryRegistry:
    return MemoryRegistry()
