"""Claims per second on both backends, and how long an edit takes to reach another instance.

SQLite: a file in a temp dir. PostgreSQL: a throw-away server (tests/support/pg.py: initdb + pg_ctl on a
Unix socket, fsync off; a real server with fsync on is slower per commit). Claims are written the
way a wake writes them: ``--batch`` claims per transaction on the store worker's connection
(``Store.writer``), and one by one (``Store.claim_fire``). Propagation: one store edits a
schedule, a ``ChangeListener`` on its own connection hears it; the median of ``--edits`` edits.

Usage: python bench/store_bench.py [--claims N] [--batch N] [--edits N] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from domi_desktop.model import CommandAction, FireClaim
from domi_desktop.store import Store
from domi_desktop.store.backend import STORE_ENV
from tests.support import pg

NOW = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
MINUTE = timedelta(minutes=1)


def _claims(url: str | None, count: int, batch: int) -> dict[str, float]:
    with (
        tempfile.TemporaryDirectory() as tmp,
        Store.open(tmp, now=NOW, url=url or "sqlite") as store,
    ):
        ids = [
            store.create_schedule(f"s{i}", "* * * * *", "UTC", CommandAction(), now=NOW).id
            for i in range(batch)
        ]
        writer = store.writer()
        try:
            started = time.perf_counter()
            for round_ in range(count // batch):
                due = NOW + (round_ + 1) * MINUTE
                writer.claim(
                    [
                        FireClaim(i, expected_last_due=due - MINUTE, due=due, fired_at=due)
                        for i in ids
                    ]
                )
            batched = (count // batch) * batch / (time.perf_counter() - started)
        finally:
            writer.close()
        single_count = max(1, count // 10)
        started = time.perf_counter()
        base = NOW + (count // batch) * MINUTE
        for n in range(single_count):
            due = base + (n + 1) * MINUTE
            store.claim_fire(
                FireClaim(ids[0], expected_last_due=due - MINUTE, due=due, fired_at=due)
            )
        single = single_count / (time.perf_counter() - started)
    return {"batched_per_s": batched, "single_per_s": single}


def _propagation(url: str, edits: int) -> dict[str, float]:
    heard = threading.Semaphore(0)
    with tempfile.TemporaryDirectory() as tmp, Store.open(tmp, now=NOW, url=url) as store:
        schedule = store.create_schedule("s", "* * * * *", "UTC", CommandAction(), now=NOW)
        listener = store.listener(heard.release, lambda _status: None)
        assert listener is not None
        listener.start()
        try:
            assert heard.acquire(timeout=10)
            delays = []
            for n in range(edits):
                started = time.perf_counter()
                store.update_schedule(schedule.id, now=NOW, name=f"s{n}")
                assert heard.acquire(timeout=5), "an edit was not heard within 5 s"
                delays.append(time.perf_counter() - started)
        finally:
            listener.stop()
    return {"median_ms": statistics.median(delays) * 1000, "max_ms": max(delays) * 1000}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=int, default=5000)
    parser.add_argument("--batch", type=int, default=50)
    parser.add_argument("--edits", type=int, default=50)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    os.environ.pop(STORE_ENV, None)
    results: dict[str, object] = {"sqlite": _claims(None, args.claims, args.batch)}
    with pg.running_server() as server, pg.fresh_database(server.dsn, "bench") as url:
        results["postgresql"] = _claims(url, args.claims, args.batch)
        results["propagation"] = _propagation(url, args.edits)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    for name in ("sqlite", "postgresql"):
        figures = results[name]
        assert isinstance(figures, dict)
        print(
            f"{name:11} claims/s: {figures['batched_per_s']:8.0f} in batches of {args.batch}, "
            f"{figures['single_per_s']:6.0f} one per transaction"
        )
    spread = results["propagation"]
    assert isinstance(spread, dict)
    print(
        f"edit → other instance (LISTEN/NOTIFY): median {spread['median_ms']:.1f} ms, "
        f"max {spread['max_ms']:.1f} ms over {args.edits} edits"
    )


if __name__ == "__main__":
    main()
