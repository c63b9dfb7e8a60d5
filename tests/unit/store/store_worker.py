"""A second process for the store tests: races, gets killed, holds runs, opens without privileges.

Run as ``python store_worker.py COMMAND DATA_DIR SCHEDULE_ID ...``; it talks over stdin/stdout lines.
"""

from __future__ import annotations

import ctypes
import sys
from datetime import datetime, timedelta

from domi_desktop.errors import StoreError
from domi_desktop.model import FireClaim, RunStatus
from domi_desktop.store import Store

MINUTE = timedelta(minutes=1)
SKIP_OFFSET = timedelta(seconds=30)
"""Each claim also records one skipped instant this long before its due, to check atomicity."""


def race(data_dir: str, schedule_id: int, rounds: int, base: datetime) -> None:
    """Claim round i's due (base + i minutes) once per round; print how many claims were ours."""
    with Store.open(data_dir, now=base) as store:
        print("ready", flush=True)
        sys.stdin.readline()  # the start barrier: every racer is open and waiting
        wins = 0
        for i in range(1, rounds + 1):
            due = base + i * MINUTE
            run_id = store.claim_fire(
                FireClaim(
                    schedule_id,
                    expected_last_due=due - MINUTE,
                    due=due,
                    fired_at=due,
                    missed_count=1,
                    skipped=[due - SKIP_OFFSET],
                )
            )
            wins += run_id is not None
        print(wins, flush=True)


def churn(data_dir: str, schedule_id: int) -> None:
    """Fire, start and finish minute after minute until killed."""
    now = datetime.fromisoformat("2026-01-01T00:00:00+00:00")
    with Store.open(data_dir, now=now) as store:
        last_due = store.get_schedule(schedule_id).last_due
        assert last_due is not None
        print("ready", flush=True)
        while True:
            due = last_due + MINUTE
            run_id = store.claim_fire(
                FireClaim(
                    schedule_id,
                    expected_last_due=last_due,
                    due=due,
                    fired_at=due,
                    missed_count=1,
                    skipped=[due - SKIP_OFFSET],
                )
            )
            assert run_id is not None, "nobody else claims in this test"
            log_path = store.log_path_for(run_id)
            log_path.write_text("ran\n")
            store.start_run(run_id, due, log_path)
            store.finish_run(run_id, status=RunStatus.succeeded, finished_at=due, exit_code=0)
            last_due = due


def hold(data_dir: str, schedule_id: int) -> None:
    """Record a running run, print its id, and keep it running until stdin says something."""
    now = datetime.fromisoformat("2026-01-01T00:00:00+00:00")
    with Store.open(data_dir, now=now) as store:
        run_id = store.record_manual_run(schedule_id, now)
    print(run_id, flush=True)
    sys.stdin.readline()


def rename(data_dir: str, schedule_id: int, name: str) -> None:
    """Rename the schedule through a store of this process, as the CLI or another app would."""
    now = datetime.fromisoformat("2026-01-01T00:00:00+00:00")
    with Store.open(data_dir, now=now) as store:
        store.update_schedule(schedule_id, now=now, name=name)
    print("renamed", flush=True)


def open_unprivileged(data_dir: str) -> None:
    """Open the store as root without CAP_DAC_OVERRIDE, i.e. subject to file modes like a user."""
    _drop_dac_capabilities()
    try:
        Store.open(data_dir, now=datetime.fromisoformat("2026-01-01T00:00:00+00:00")).close()
    except StoreError as exc:
        print(exc, flush=True)
        raise SystemExit(3) from None
    print("opened", flush=True)


class _CapHeader(ctypes.Structure):
    _fields_ = (("version", ctypes.c_uint32), ("pid", ctypes.c_int))


class _CapData(ctypes.Structure):
    _fields_ = (
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    )


def _drop_dac_capabilities() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    header = _CapHeader(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3
    data = (_CapData * 2)()
    keep = ~((1 << 1) | (1 << 2)) & 0xFFFFFFFF  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
    if libc.capget(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capget")
    data[0].effective &= keep
    data[0].permitted &= keep
    if libc.capset(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capset")


def main(argv: list[str]) -> None:
    command, data_dir, *rest = argv
    if command == "race":
        race(data_dir, int(rest[0]), int(rest[1]), datetime.fromisoformat(rest[2]))
    elif command == "churn":
        churn(data_dir, int(rest[0]))
    elif command == "hold":
        hold(data_dir, int(rest[0]))
    elif command == "rename":
        rename(data_dir, int(rest[0]), rest[1])
    elif command == "open-unprivileged":
        open_unprivileged(data_dir)
    else:
        raise SystemExit(f"unknown command {command}")


if __name__ == "__main__":
    main(sys.argv[1:])
