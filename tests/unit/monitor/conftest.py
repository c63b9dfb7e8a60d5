"""The monitor tests' shared fixtures: a local Healthchecks and a fake clock."""

from __future__ import annotations

from tests.unit.monitor.test_monitoring import clock, hc

__all__ = ["clock", "hc"]
