"""The packaging tests' figures (build time, sizes, start-up), printed at the end of the run."""

from __future__ import annotations

from typing import Any

import pytest

_FIGURES: list[str] = []


@pytest.fixture(scope="session")
def figures() -> list[str]:
    """Append a line to show it in a 'packaging figures' section after the tests."""
    return _FIGURES


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _FIGURES:
        terminalreporter.section("packaging figures")
        for line in _FIGURES:
            terminalreporter.write_line(line)
