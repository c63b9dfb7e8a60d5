"""`domi-desktop conditions`: what the jobs' conditions see, from the program itself (the smoke
test asks a built bundle the same way whether it can read the network)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from domi_desktop.model import NetworkState
from tests.support.wine import wine_cannot

SMOKE_TEST = Path(__file__).resolve().parents[3] / "packaging" / "smoke_test.py"


def network_backend_pattern() -> re.Pattern[str]:
    """The smoke test's own pattern: what it demands of a bundle is what is checked here."""
    spec = importlib.util.spec_from_file_location("smoke_test", SMOKE_TEST)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    pattern: re.Pattern[str] = module.NETWORK_BACKEND
    return pattern


@wine_cannot(
    "Qt's networklistmanager backend never returns from loading over Wine's Network List Manager"
)
def test_it_prints_the_state_once_and_names_qt_s_network_backend() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "domi_desktop", "conditions"],
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (line,) = done.stdout.splitlines()
    state = json.loads(line)
    assert state["event"] == "started"
    assert state["network"] in {state.value for state in NetworkState}
    assert network_backend_pattern().search(state["status"]), state["status"]
