"""The Windows adapters against Windows itself: the Run key autostart and the execution state that
keeps the machine awake. On a real machine the user's own entry is put back afterwards."""

from __future__ import annotations

import ctypes
import subprocess
import sys
from collections.abc import Iterator

import pytest

from domi_desktop.platform.autostart.base import APP_NAME
from domi_desktop.platform.autostart.windows import (
    RUN_KEY,
    STARTUP_APPROVED_KEY,
    RunKeyAutostart,
    user_registry,
)
from domi_desktop.platform.inhibit.windows import (
    ES_CONTINUOUS,
    ES_SYSTEM_REQUIRED,
    ExecutionStateInhibitor,
)

pytestmark = pytest.mark.windows_only


@pytest.fixture
def registry_entry_kept() -> Iterator[None]:
    registry = user_registry()
    saved = {key: registry.get(key, APP_NAME) for key in (RUN_KEY, STARTUP_APPROVED_KEY)}
    yield
    for key, value in saved.items():
        if value is None:
            registry.delete(key, APP_NAME)
        else:
            registry.set(key, APP_NAME, value)


def reg_query(key: str) -> str:
    done = subprocess.run(
        ["reg", "query", f"HKCU\\{key}", "/v", APP_NAME],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    return done.stdout if done.returncode == 0 else ""


def test_the_run_key_entry_round_trips_through_the_real_registry(registry_entry_kept: None) -> None:
    autostart = RunKeyAutostart(user_registry())
    command = [sys.executable, "-m", "domi_desktop", "--minimized"]
    autostart.enable(command)
    assert autostart.is_enabled()
    # What Explorer reads at login, through another program than ours.
    assert subprocess.list2cmdline(command) in reg_query(RUN_KEY)
    assert APP_NAME in reg_query(STARTUP_APPROVED_KEY)

    autostart.disable()
    assert not autostart.is_enabled()
    assert reg_query(RUN_KEY) == ""


def test_keeping_awake_sets_the_threads_execution_state_until_the_last_release() -> None:
    kernel32 = ctypes.WinDLL("kernel32")
    kernel32.SetThreadExecutionState.argtypes = (ctypes.c_uint32,)
    kernel32.SetThreadExecutionState.restype = ctypes.c_uint32

    def state_now() -> int:
        # Setting a state returns the one before: set it back to itself to read it.
        state = int(kernel32.SetThreadExecutionState(ES_CONTINUOUS))
        kernel32.SetThreadExecutionState(state | ES_CONTINUOUS)
        return state

    inhibitor = ExecutionStateInhibitor()
    first = inhibitor.acquire("Backup is running")
    second = inhibitor.acquire("Sync is running")
    assert inhibitor.status == "the execution state keeps the machine awake (Sync is running)"
    assert state_now() & ES_SYSTEM_REQUIRED
    first.release()
    assert state_now() & ES_SYSTEM_REQUIRED
    second.release()
    assert not state_now() & ES_SYSTEM_REQUIRED
