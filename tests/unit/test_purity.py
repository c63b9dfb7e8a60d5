"""The core imports nothing heavy: every module of it, walked, in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONTRACTS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"][
    "contracts"
]
# One list in one place: the import-linter contract that keeps the core pure.
PURE = next(c for c in CONTRACTS if c["name"].startswith("The core is pure"))
CORE = [name.removeprefix("domi_desktop.") for name in PURE["source_modules"]]
HEAVY = tuple(PURE["forbidden_modules"])

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


@pytest.mark.parametrize("package", ["store", "runtime"])
def test_the_walk_would_see_a_heavy_import(package: str) -> None:
    _count, bad = walk([package])
    assert "peewee" in bad


def test_every_private_module_is_kept_inside_its_package() -> None:
    guarded = {
        module
        for contract in CONTRACTS
        if contract["name"].startswith("The private modules of")
        for module in contract["forbidden_modules"]
    }
    private = {
        "domi_desktop." + ".".join(path.relative_to(ROOT / "domi_desktop").with_suffix("").parts)
        for path in (ROOT / "domi_desktop").rglob("_*.py")
        if not path.name.startswith("__")
    }
    assert private - guarded == set()
