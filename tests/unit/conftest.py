"""Fixtures of the unit tests."""

from __future__ import annotations

from tests.support.cli import cli  # noqa: F401  (the fixture)
