"""The check that a test leaves nothing running (tests/support/leaks.py), run on a throw-away
suite in its own pytest process: what leaks fails naming the test, what ends in time passes, and
what a module-wide fixture starts and stops is that fixture's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SUITE = """
import subprocess, sys, threading, time

import pytest


def test_leaves_a_thread():
    threading.Thread(target=time.sleep, args=(60,), name="forgotten", daemon=True).start()


def test_leaves_a_process():
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])


def test_stops_what_it_started():
    ending = threading.Thread(target=time.sleep, args=(0.2,), name="ending")
    ending.start()
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()


@pytest.fixture(scope="module")
def server():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield child
    child.kill()
    child.wait()


def test_uses_a_module_server(server):
    assert server.poll() is None


def test_uses_it_again(server):
    assert server.poll() is None
"""
LEAKY_FIXTURE = """
import subprocess, sys

import pytest


@pytest.fixture(scope="module")
def server():
    yield subprocess.Popen([sys.executable, "-c", "import time; time.sleep(61)"])


def test_first(server):
    pass


def test_second(server):
    pass
"""


def test_a_test_that_leaves_a_thread_or_a_process_fails_by_name(tmp_path: Path) -> None:
    (tmp_path / "test_suite.py").write_text(SUITE)
    (tmp_path / "test_tail.py").write_text(LEAKY_FIXTURE)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.support.leaks", "-p", "no:cacheprovider",
         "-W", "ignore::pytest.PytestUnraisableExceptionWarning", "-rA", "test_suite.py", "test_tail.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert "ERROR test_suite.py::test_leaves_a_thread" in out
    assert "test_suite.py::test_leaves_a_thread left running after its teardown:" in out
    assert "thread 'forgotten'" in out
    assert "ERROR test_suite.py::test_leaves_a_process" in out
    assert "test_suite.py::test_leaves_a_process left running after its teardown:" in out
    assert "child process pid" in out and "time.sleep(60)" in out
    # what a module's fixture left is told once the module is done, in the name of its starter
    assert "ERROR test_tail.py::test_second" in out
    assert "test_tail.py::test_first left running, after its fixtures server ended:" in out
    assert "time.sleep(61)" in out
    assert "test_tail.py::test_second left" not in out
    assert "7 passed, 3 errors" in out
