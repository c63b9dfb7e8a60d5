"""The core imports nothing heavy: every module of it, walked, in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys

import pytest

CORE = ["cron", "scheduler", "crontab", "export", "model", "ports", "timefmt", "errors", "clock"]
HEAVY = ("PySide6", "shiboken6", "peewee", "keyring", "subprocess", "psycopg", "sqlite3")

WALK = """
import importlib, pkgutil, sys
import domi_desktop
loaded = []
for name in {core!r}:
    module = importlib.import_module("domi_desktop." + name)
    loaded.append(module.__name__)
    if hasattr(module, "__path__"):
        for info in pkgutil.walk_packages(module.__path__, module.__name__ + "."):
            importlib.import_module(info.name)
            loaded.append(info.name)
bad = sorted({{m.split(".")[0] for m in sys.modules}} & set({heavy!r}))
print(len(loaded), ",".join(bad))
"""


def walk(core: list[str]) -> tuple[int, str]:
    result = subprocess.run(
        [sys.executable, "-c", WALK.format(core=core, heavy=HEAVY)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    count, _, bad = result.stdout.strip().partition(" ")
    return int(count), bad


def test_every_module_of_the_core_loads_nothing_heavy() -> None:
    count, bad = walk(CORE)
    assert bad == ""
    assert count >= 15  # the walk reached the modules inside cron/ and scheduler/


@pytest.mark.parametrize("package", ["store", "api"])
def test_the_walk_would_see_a_heavy_import(package: str) -> None:
    _count, bad = walk([package])
    assert "peewee" in bad
