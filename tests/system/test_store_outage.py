"""A shared store's outage: three machines on one PostgreSQL store whose server goes away for two minutes and
comes back. Every machine fires again once it is back (a link left closed by a reconnect tried
while the server was down used to fail every use after it): each runs the next due of a schedule
placed on it alone; nothing doubled, no run left ``running``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from tests.support import pg
from tests.support.fakes import EVENT_DEADLINE, wait_for
from tests.system.test_cli_shared_store import pg_ctl

pytestmark = [pytest.mark.slow, pytest.mark.linux_only]

MACHINES = ("laptop-a", "laptop-b", "laptop-c")
OUTAGE = 120
"""Seconds the server is down: every machine's reconnects back off to their longest meanwhile."""


@pytest.fixture
def server() -> Iterator[pg.PostgresServer]:
    if pg.find_bin_dir() is None:
        pytest.skip("PostgreSQL server binaries not found; install the Debian package postgresql")
    with pg.running_server() as running:
        yield running


def env_of(tmp_path: Path, url: str, machine: str) -> dict[str, str]:
    data = tmp_path / machine
    data.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    env.update(DOMI_DATA_DIR=str(data), DOMI_STORE=url, DOMI_MACHINE=machine,
               QT_QPA_PLATFORM="offscreen",
               DBUS_SYSTEM_BUS_ADDRESS=f"unix:path={data}/no-such-bus")  # fmt: skip
    return env


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "domi_desktop", *args],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip


def status(env: dict[str, str]) -> dict[str, Any]:
    done = cli(env, "status", "--json")
    return json.loads(done.stdout) if done.returncode == 0 and done.stdout else {}


def start_again(server: pg.PostgresServer) -> None:
    """With the options it was first started with: its socket where the apps look for it."""
    options = f"-k {server.socket_dir} -c listen_addresses='' -c fsync=off"
    pg_ctl(server, "-l", str(server.log_file), "-o", options, "start")


def running(env: dict[str, str]) -> bool:
    return status(env).get("running") is True


def healthy(env: dict[str, str]) -> bool:
    state = status(env)
    return state.get("running") is True and (state.get("store") or {}).get("problem") is None


def test_every_machine_fires_again_after_the_server_was_down(
    server: pg.PostgresServer, tmp_path: Path
) -> None:
    import psycopg

    with pg.fresh_database(server.dsn, f"outage_{os.getpid()}") as url:
        envs = {machine: env_of(tmp_path, url, machine) for machine in MACHINES}
        first = envs[MACHINES[0]]
        for machine in MACHINES:
            added = cli(first, "schedule", "add", f"tick {machine}", "--cron", "* * * * *",
                        "--run-on", machine, "--", "true")  # fmt: skip
            assert added.returncode == 0, added.stderr
        apps: list[subprocess.Popen[bytes]] = []
        for machine, env in envs.items():
            with (tmp_path / f"{machine}.stderr").open("wb") as stderr:
                app = subprocess.Popen(
                    [sys.executable, "-m", "domi_desktop", "--headless"],
                    env=env, stdout=subprocess.DEVNULL, stderr=stderr,
                )  # fmt: skip
            apps.append(app)
        down = False
        try:
            for env in envs.values():
                wait_for(partial(running, env), EVENT_DEADLINE, "each app")
            # Down across a minute boundary: every machine wakes (and tries the store) meanwhile.
            while datetime.now(UTC).second < 40:
                time.sleep(0.5)
            pg_ctl(server, "-m", "immediate", "stop")
            down = True
            time.sleep(OUTAGE)
            start_again(server)
            down = False
            back = datetime.now(UTC)
            # The next due after the return, and each machine's store usable again.
            with psycopg.connect(url) as db:

                def fired_after(machine: str) -> bool:
                    rows = db.execute(
                        "SELECT count(*) FROM runs WHERE due > %s AND status != 'skipped' "
                        "AND machine = %s",
                        (int(back.timestamp() * 1_000_000), machine),
                    ).fetchone()
                    db.commit()
                    return bool(rows and rows[0] >= 1)

                for machine in MACHINES:
                    wait_for(
                        partial(fired_after, machine),
                        EVENT_DEADLINE,
                        f"{machine} to run a due again",
                    )
            for machine, env in envs.items():
                wait_for(partial(healthy, env), EVENT_DEADLINE, f"{machine} to use the store again")
        finally:
            if down:
                start_again(server)
            for app in apps:
                app.terminate()
            for app in apps:
                try:
                    app.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    app.kill()
                    app.wait()
        with psycopg.connect(url) as db:
            doubled = db.execute(
                "SELECT schedule_id, due, count(*) FROM runs WHERE due IS NOT NULL "
                "AND status != 'skipped' GROUP BY schedule_id, due HAVING count(*) > 1"
            ).fetchall()
            left = db.execute("SELECT id, machine FROM runs WHERE status = 'running'").fetchall()
        assert doubled == [], "a due ran twice"
        assert left == [], "a run was left running"
