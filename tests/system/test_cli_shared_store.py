"""The CLI against an app whose shared (PostgreSQL) store is down: ``status`` still
answers, with the store's problem, as the README says."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import pg
from tests.support.fakes import EVENT_DEADLINE, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.linux_only]


@pytest.fixture
def server() -> Iterator[pg.PostgresServer]:
    """A server of this test's own: the test stops it (and starts it again for its clean-up)."""
    if pg.find_bin_dir() is None:
        pytest.skip("PostgreSQL server binaries not found; install the Debian package postgresql")
    with pg.running_server() as running:
        yield running


def pg_ctl(server: pg.PostgresServer, *args: str) -> None:
    subprocess.run(
        [*pg._as_server_user(), str(server.bin_dir / "pg_ctl"), "-D", str(server.data_dir),
         "-w", *args],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "domi_desktop", *args],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip


def test_status_says_the_shared_store_is_unreachable_while_its_server_is_down(
    server: pg.PostgresServer, tmp_path: Path
) -> None:
    with pg.fresh_database(server.dsn, f"status_{os.getpid()}") as url:
        data = tmp_path / "data"
        data.mkdir()
        env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
        env.update(DOMI_DATA_DIR=str(data), DOMI_STORE=url, QT_QPA_PLATFORM="offscreen",
                   DBUS_SYSTEM_BUS_ADDRESS=f"unix:path={data}/no-such-bus")  # fmt: skip
        with (tmp_path / "app.stderr").open("wb") as stderr:
            app = subprocess.Popen(
                [sys.executable, "-m", "domi_desktop", "--headless"],
                env=env, stdout=subprocess.DEVNULL, stderr=stderr,
            )  # fmt: skip
        stopped = False
        try:
            wait_for(
                lambda: cli(env, "status", "--json").returncode == 0, EVENT_DEADLINE, "the app"
            )
            pg_ctl(server, "-m", "immediate", "stop")
            stopped = True
            done = cli(env, "status", "--json")
            assert done.returncode == 0, done.stderr
            state = json.loads(done.stdout)
            assert state["running"] is True and state["pid"] == app.pid
            assert state["store"]["shared"] is True
            assert state["store"]["problem"] == "shared store unreachable"
            human = cli(env, "status")
            assert human.returncode == 0, human.stderr
            assert "shared store unreachable" in human.stdout
        finally:
            app.terminate()
            try:
                app.wait(timeout=30)
            except subprocess.TimeoutExpired:
                app.kill()
                app.wait()
            if stopped:  # running_server stops what it started
                options = f"-k {server.socket_dir} -c listen_addresses='' -c fsync=off"
                pg_ctl(server, "-l", str(server.log_file), "-o", options, "start")
