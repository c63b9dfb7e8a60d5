"""Fixtures of the system tests: real apps in real processes.

fleet   several headless apps on one PostgreSQL store, each with its own host name and clock
        (tests/system/fleet.py)
"""

from __future__ import annotations

from tests.system.fleet import fleet  # noqa: F401  (the fixture of the fleet tests)
