"""The sleep lab's agent, inside the guest: the host's hands there, over the second serial port.

Runs under the project's venv Python in the guest (stdlib only; busybox init respawns it). One JSON
object a line each way: the host sends ``{"id": N, "op": ..., ...}``, the agent answers
``{"id": N, ...}`` (``"error"`` when the op raised). On start it says ``{"ready": ...}``.

ops:
  sh       run a shell command (busybox sh): rc, out, err
  spawn    start a command in its own session, output to a file: pid
  py       exec Python here (the namespace has ``suspend``, ``sh``, ``json``, ``sqlite3``, ``time``,
           ``os``); the answer is the JSON value left in ``result``
  read     a file's bytes, base64
  suspend  suspend to RAM (S3, ``deep``); ``seconds``: arm the CMOS RTC that far ahead, or
           ``null`` to leave the RTC alone (only the app's alarm, input or the host wakes it)
"""

from __future__ import annotations

import base64
import json
import os
import sqlite3
import subprocess
import sys
import time
import traceback
import tty
from typing import Any

PORT = "/dev/ttyS1"
WAKEALARM = "/sys/class/rtc/rtc0/wakealarm"


def clocks() -> dict[str, float]:
    return {
        "wall": time.time(),
        "mono": time.monotonic(),
        "boot": time.clock_gettime(time.CLOCK_BOOTTIME),
    }


def _write(path: str, text: str) -> None:
    with open(path, "w") as file:
        file.write(text)


def suspend(
    seconds: float | None, at: float | None = None, until: float | None = None
) -> dict[str, Any]:
    """Suspend to RAM at ``at`` (the wall clock's epoch seconds; now if ``None``), woken by the
    RTC ``seconds`` later or at ``until`` (epoch seconds), or by nothing we arm when both are
    ``None``; returns when the guest runs again, with the clocks before and after.

    ``after.wall`` is when user space was thawed (the app with it); ``slept`` the seconds the
    machine spent suspended (CLOCK_BOOTTIME moved, CLOCK_MONOTONIC did not)."""
    if at is not None:
        time.sleep(max(0.0, at - time.time()))
    _write("/sys/power/mem_sleep", "deep")
    _write(WAKEALARM, "0")
    if until is not None:
        _write(WAKEALARM, str(round(until)))
    elif seconds is not None:
        _write(WAKEALARM, f"+{round(seconds)}")
    before = clocks()
    error = None
    try:
        _write("/sys/power/state", "mem")
    except OSError as failure:
        error = str(failure)
    after = clocks()
    awake = after["mono"] - before["mono"]
    slept = (after["boot"] - before["boot"]) - awake
    _write(WAKEALARM, "0")
    return {"before": before, "after": after, "slept": slept, "awake": awake, "error": error}


def sh(
    cmd: str, timeout: float = 120, env: dict[str, str] | None = None, stdin: str | None = None
) -> dict[str, Any]:
    done = subprocess.run(
        ["/bin/sh", "-c", cmd],
        input=(stdin or "").encode(),
        capture_output=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )
    return {
        "rc": done.returncode,
        "out": done.stdout.decode(errors="replace"),
        "err": done.stderr.decode(errors="replace"),
    }


def spawn(cmd: str, log: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    with open(log, "ab") as out:
        process = subprocess.Popen(
            ["/bin/sh", "-c", f"exec {cmd}"],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
            start_new_session=True,
        )
    return {"pid": process.pid}


def handle(request: dict[str, Any]) -> dict[str, Any]:
    op = request["op"]
    if op == "sh":
        return sh(
            request["cmd"], request.get("timeout", 120), request.get("env"), request.get("stdin")
        )
    if op == "spawn":
        return spawn(request["cmd"], request["log"], request.get("env"))
    if op == "read":
        with open(request["path"], "rb") as file:
            return {"data": base64.b64encode(file.read()).decode()}
    if op == "suspend":
        return suspend(request.get("seconds"), request.get("at"), request.get("until"))
    if op == "py":
        space: dict[str, Any] = {
            "suspend": suspend, "sh": sh, "json": json, "sqlite3": sqlite3, "time": time,
            "os": os, "clocks": clocks, "result": None, "args": request.get("args"),
        }  # fmt: skip
        exec(request["code"], space)
        return {"result": space["result"]}
    raise ValueError(f"unknown op {op!r}")


def main() -> None:
    fd = os.open(PORT, os.O_RDWR | os.O_NOCTTY)
    tty.setraw(fd)
    port_in = os.fdopen(fd, "rb", buffering=0)
    port_out = os.fdopen(os.dup(fd), "wb", buffering=0)

    def send(message: dict[str, Any]) -> None:
        port_out.write(json.dumps(message).encode() + b"\n")

    with open("/proc/sys/kernel/random/boot_id") as file:
        boot_id = file.read().strip()
    with open("/sys/power/mem_sleep") as file:
        mem_sleep = file.read().strip()
    send({"ready": True, "boot_id": boot_id, "mem_sleep": mem_sleep, "clocks": clocks()})
    buffer = b""
    while True:
        chunk = port_in.read(65536)
        if not chunk:
            time.sleep(0.05)
            continue
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            line = line.strip()
            if not line.startswith(b"{"):
                continue  # noise on the line (a UART reset across a suspend)
            try:
                request = json.loads(line)
            except ValueError:
                continue
            try:
                answer = handle(request)
            except Exception as error:
                answer = {
                    "error": f"{type(error).__name__}: {error}",
                    "trace": traceback.format_exc(),
                }
            send({"id": request.get("id"), **answer})


if __name__ == "__main__":
    sys.exit(main())
