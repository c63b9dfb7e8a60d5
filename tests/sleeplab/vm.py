"""The sleep lab's guest as a QEMU process the host drives (tests/sleeplab/README.md).

``Lab.boot()`` starts QEMU (pure TCG: no KVM here) on the guest ``build.build()`` made; the host
talks to it through

- the agent on the guest's second UART (``run``, ``py``, ``read``, ``suspend``), one JSON line a
  request, each answered after the guest resumed when it suspends;
- QMP (``qmp``): ``query-status`` says ``suspended`` while the guest is in S3, ``system_wakeup``
  wakes it (the safety net of a suspend without an RTC alarm), ``send-key`` types on its PS/2
  keyboard (input, which also wakes a suspended guest);
- the first UART, the kernel's console, into ``console.log`` (printed when a test fails).

``Lab.close()`` always ends QEMU (the fixture calls it, also on failure).
"""

from __future__ import annotations

import base64
import contextlib
import json
import select
import shlex
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.sleeplab.build import Guest, boot_initramfs, build

DATA_DIR = "/data"
"""The app's data dir in the guest (``DOMI_DATA_DIR``), a tmpfs."""
APP_LOG = "/tmp/domi-headless.log"
MEMORY_MB = 1536
KERNEL_ARGS = (
    "console=ttyS0,115200 loglevel=7 no_console_suspend panic=-1 mem_sleep_default=deep"
    " rdinit=/init"
)


def _die_with_parent() -> None:
    """QEMU gets SIGKILL when the test process ends, however it ends (PR_SET_PDEATHSIG)."""
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)


class LabError(AssertionError):
    """The guest did not do what the host asked (an answer missing, an op that failed)."""


@dataclass
class Suspended:
    """One suspend, in the guest's clocks: ``resumed`` is the wall-clock instant user space (the
    app with it) ran again; ``slept`` the seconds spent suspended (CLOCK_BOOTTIME minus
    CLOCK_MONOTONIC: a real S3 stops the latter)."""

    suspended: float
    resumed: float
    slept: float
    host_seconds: float
    woken_by_host: bool


class Lab:
    def __init__(self, workdir: Path, guest: Guest | None = None) -> None:
        self.workdir = workdir
        self.guest = guest or build()
        self.process: subprocess.Popen[bytes] | None = None
        self._ctl: socket.socket | None = None
        self._qmp: socket.socket | None = None
        self._ctl_buffer = b""
        self._qmp_buffer = b""
        self._next_id = 0
        self.ready: dict[str, Any] = {}
        self.boot_seconds = 0.0
        self.python = str(self.guest.venv_python)
        self.repo = str(self.guest.repo)
        self.env = {
            "DOMI_DATA_DIR": DATA_DIR,
            "HOME": "/root",
            "XDG_RUNTIME_DIR": "/run/user/0",
            "TZ": "UTC",
            "LANG": "C.UTF-8",
            "PATH": "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
            "PYTHONDONTWRITEBYTECODE": "",
        }

    # -- life ----------------------------------------------------------------------------------

    @property
    def console(self) -> Path:
        return self.workdir / "console.log"

    def boot(self, timeout: float = 600) -> Lab:
        started = time.monotonic()
        self.workdir.mkdir(parents=True, exist_ok=True)
        env_line = " ".join(f"{k}={shlex.quote(v)}" for k, v in self.env.items() if v)
        agent = f"/usr/bin/env {env_line} {self.python} -u /sleeplab/agent.py"
        inittab = f"::sysinit:/bin/sh /sleeplab/stage2.sh\n::respawn:{agent}\n"
        initramfs = self.workdir / "boot.cpio"
        boot_initramfs(self.guest, initramfs, inittab)
        ctl, qmp = self.workdir / "ctl.sock", self.workdir / "qmp.sock"
        for path in (ctl, qmp):
            path.unlink(missing_ok=True)
        command = [
            "qemu-system-x86_64", "-machine", "pc", "-accel", "tcg", "-cpu", "max",
            "-m", str(MEMORY_MB),
            "-smp", "1", "-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
            "-rtc", "base=utc,clock=host",
            "-kernel", str(self.guest.kernel), "-initrd", str(initramfs), "-append", KERNEL_ARGS,
            "-drive", f"file={self.guest.image},format=raw,if=virtio,readonly=on",
            "-chardev", f"file,id=console,path={self.console}", "-serial", "chardev:console",
            "-chardev", f"socket,id=ctl,path={ctl},server=on,wait=off", "-serial", "chardev:ctl",
            "-chardev", f"socket,id=qmp,path={qmp},server=on,wait=off",
            "-mon", "chardev=qmp,mode=control",
        ]  # fmt: skip
        with (self.workdir / "qemu.out").open("wb") as out:
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                preexec_fn=_die_with_parent,  # noqa: PLW1509 (prctl only: no lock, no allocation)
            )
        self._ctl = self._connect(ctl)
        self._qmp = self._connect(qmp)
        self._qmp_read(lambda m: "QMP" in m, 30)
        self.qmp("qmp_capabilities")
        self.ready = self._ctl_read(lambda m: bool(m.get("ready")), timeout)
        self.boot_seconds = time.monotonic() - started
        return self

    def _connect(self, path: Path) -> socket.socket:
        deadline = time.monotonic() + 30
        while True:
            self._check_alive()
            try:
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                sock.connect(str(path))
                return sock
            except OSError:
                sock.close()
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def _check_alive(self) -> None:
        if self.process is not None and self.process.poll() is not None:
            raise LabError(f"QEMU ended (exit {self.process.returncode}):\n{self.tail()}")

    def close(self) -> None:
        """End QEMU, whatever state the guest is in (SIGKILL)."""
        for sock in (self._ctl, self._qmp):
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.close()
        self._ctl = self._qmp = None
        if self.process is not None:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=30)
            self.process = None

    def tail(self, lines: int = 60) -> str:
        text = ""
        for path in (self.workdir / "qemu.out", self.console):
            if path.exists():
                text += f"--- {path.name}\n" + "\n".join(
                    path.read_text(errors="replace").splitlines()[-lines:]
                )
        return text

    # -- the channels --------------------------------------------------------------------------

    def _read_lines(self, sock: socket.socket, buffer_name: str, timeout: float) -> list[bytes]:
        readable, _, _ = select.select([sock], [], [], timeout)
        if not readable:
            return []
        chunk = sock.recv(65536)
        if not chunk:
            raise LabError(f"the guest's {buffer_name} channel closed:\n{self.tail()}")
        buffer = getattr(self, buffer_name) + chunk
        *lines, rest = buffer.split(b"\n")
        setattr(self, buffer_name, rest)
        return lines

    def _ctl_read(self, wanted: Any, timeout: float) -> dict[str, Any]:
        assert self._ctl is not None
        deadline = time.monotonic() + timeout
        while True:
            self._check_alive()
            left = deadline - time.monotonic()
            if left <= 0:
                raise LabError(
                    f"no answer from the guest's agent in {timeout:.0f} s\n{self.tail()}"
                )
            for line in self._read_lines(self._ctl, "_ctl_buffer", min(left, 1.0)):
                start = line.find(b"{")
                if start < 0:
                    continue
                try:
                    message = json.loads(line[start:])
                except ValueError:
                    continue
                if message.get("ready") and self.ready:
                    raise LabError(f"the guest's agent restarted:\n{self.tail()}")
                if wanted(message):
                    return message  # type: ignore[no-any-return]

    def _qmp_read(self, wanted: Any, timeout: float) -> dict[str, Any]:
        assert self._qmp is not None
        deadline = time.monotonic() + timeout
        while True:
            self._check_alive()
            left = deadline - time.monotonic()
            if left <= 0:
                raise LabError(f"no answer from QMP in {timeout:.0f} s")
            for line in self._read_lines(self._qmp, "_qmp_buffer", min(left, 1.0)):
                message = json.loads(line)
                if wanted(message):
                    return message  # type: ignore[no-any-return]

    def qmp(self, command: str, timeout: float = 30, **arguments: Any) -> Any:
        assert self._qmp is not None
        request: dict[str, Any] = {"execute": command}
        if arguments:
            request["arguments"] = arguments
        self._qmp.sendall(json.dumps(request).encode() + b"\n")
        answer = self._qmp_read(lambda m: "return" in m or "error" in m, timeout)
        if "error" in answer:
            raise LabError(f"QMP {command}: {answer['error']}")
        return answer["return"]

    def request(self, op: str, wait: float = 180, **fields: Any) -> dict[str, Any]:
        assert self._ctl is not None
        self._next_id += 1
        ident = self._next_id
        self._ctl.sendall(json.dumps({"id": ident, "op": op, **fields}).encode() + b"\n")
        answer = self._ctl_read(lambda m: m.get("id") == ident, wait)
        if "error" in answer:
            raise LabError(f"guest {op} failed: {answer['error']}\n{answer.get('trace', '')}")
        return answer

    # -- what tests use ------------------------------------------------------------------------

    def reach(self, within: float = 120) -> None:
        """After a wake the agent did not ask for (the app suspended the guest itself), QMP says
        ``running`` before the guest's UART is resumed, and what is sent meanwhile is lost: ask
        again until the agent answers."""
        deadline = time.monotonic() + within
        while True:
            try:
                self.request("py", wait=10, code="result = 1", args={})
                return
            except LabError:
                if time.monotonic() > deadline:
                    raise

    def sh(self, cmd: str, timeout: float = 180, check: bool = True) -> dict[str, Any]:
        answer = self.request("sh", wait=timeout + 10, cmd=cmd, timeout=timeout)
        if check and answer["rc"] != 0:
            raise LabError(f"guest: {cmd!r} exited {answer['rc']}: {answer['err']}{answer['out']}")
        return answer

    def py(self, code: str, timeout: float = 180, **args: Any) -> Any:
        return self.request("py", wait=timeout, code=code, args=args)["result"]

    def read(self, path: str) -> bytes:
        return base64.b64decode(self.request("read", path=path)["data"])

    def status(self) -> str:
        """QEMU's run state: ``running``, or ``suspended`` while the guest is in S3."""
        return str(self.qmp("query-status")["status"])

    def now(self) -> float:
        """The guest's wall clock (epoch seconds)."""
        return float(self.py("result = time.time()"))

    def suspend(
        self,
        seconds: float | None,
        safety: float | None = None,
        at: float | None = None,
        until: float | None = None,
    ) -> Suspended:
        """Suspend the guest to RAM (S3) at ``at`` (the guest's wall clock; at once if
        ``None``); its CMOS RTC wakes it ``seconds`` later, or at ``until`` (the guest's wall
        clock); with neither the RTC is left alone, so only the app's own alarm, input or the
        host wakes it: the host wakes it itself (QMP ``system_wakeup``) ``safety`` seconds (300
        by default) after the RTC would have."""
        assert self._ctl is not None
        now = self.now()
        before = max(0.0, at - now) if at is not None else 0.0
        if until is not None:
            seconds = max(0.0, until - max(now, at or now))
        self._next_id += 1
        ident = self._next_id
        started = time.monotonic()
        self._ctl.sendall(
            json.dumps(
                {"id": ident, "op": "suspend", "seconds": seconds, "at": at, "until": until}
            ).encode()
            + b"\n"
        )
        limit = before + (seconds or 0) + (safety if safety is not None else 300)
        woken_by_host = False
        deadline = time.monotonic() + limit
        answer = None
        while answer is None:
            try:
                answer = self._ctl_read(lambda m: m.get("id") == ident, 2)
            except LabError as error:
                if "no answer" not in str(error):
                    raise
                late = time.monotonic() > deadline and not woken_by_host
                if late and self.status() == "suspended":
                    woken_by_host = True
                    self.qmp("system_wakeup")
                if time.monotonic() > deadline + 120:
                    raise
        if answer.get("error"):
            raise LabError(f"suspend failed: {answer['error']}\n{self.tail()}")
        return Suspended(
            suspended=answer["before"]["wall"],
            resumed=answer["after"]["wall"],
            slept=answer["slept"],
            host_seconds=time.monotonic() - started,
            woken_by_host=woken_by_host,
        )

    def type_key(self, key: str = "shift") -> None:
        """A key pressed on the guest's PS/2 keyboard (input; it also wakes a suspended guest)."""
        self.qmp("send-key", keys=[{"type": "qcode", "data": key}])

    # -- the app in the guest ------------------------------------------------------------------

    def cli(self, *args: str, timeout: float = 180) -> Any:
        """``python -m domi_desktop ARGS`` in the guest; its JSON when ``--json`` is among them."""
        command = " ".join(shlex.quote(a) for a in (self.python, "-m", "domi_desktop", *args))
        answer = self.sh(f"cd / && {command}", timeout=timeout)
        return json.loads(answer["out"]) if "--json" in args else answer["out"]

    def add(self, name: str, cron: str, command: str, *options: str) -> int:
        """A command schedule (one shell line) in UTC, added with the app's CLI; its id."""
        args = ("schedule", "add", name, "--cron", cron, "--tz", "UTC", *options, "--json")
        return int(self.cli(*args, "--shell", "--", command)["id"])

    def runs(self, schedule_id: int | None = None, limit: int = 1000) -> list[dict[str, Any]]:
        """The app's history (``runs --json``), oldest first."""
        which = ("--schedule", str(schedule_id)) if schedule_id is not None else ()
        return list(reversed(self.cli("runs", *which, "--limit", str(limit), "--json")))

    def start_app(self) -> int:
        command = f"{shlex.quote(self.python)} -m domi_desktop --headless"
        return int(self.request("spawn", cmd=command, log=APP_LOG)["pid"])

    def app_log(self) -> str:
        return self.read(APP_LOG).decode(errors="replace")

    def wait_app(self, timeout: float = 600) -> dict[str, Any]:
        """Until the app in the guest answers ``status --json``; its answer."""
        deadline = time.monotonic() + timeout
        while True:
            answer = self.sh(
                f"cd / && {shlex.quote(self.python)} -m domi_desktop status --json", check=False
            )
            if answer["rc"] == 0:
                return json.loads(answer["out"])  # type: ignore[no-any-return]
            if time.monotonic() > deadline:
                log = self.sh(f"cat {APP_LOG}", check=False)["out"]
                raise LabError(f"the app in the guest did not answer in {timeout:.0f} s:\n{log}")
            time.sleep(1)


def minute_at(epoch: float, second: int, lead: float) -> float:
    """The first instant at ``second`` past a minute that is at least ``lead`` seconds after
    ``epoch``."""
    start = epoch + lead
    at = start - start % 60 + second
    return at if at >= start else at + 60


def clear_of_a_minute(lab: Lab, margin: float = 3.0) -> float:
    """Waits until the guest's clock is at least ``margin`` seconds from a minute boundary (a
    sleep that begins there would race the due at that boundary); the guest's clock then."""
    now = lab.now()
    second = now % 60
    if second < margin or second > 60 - margin:
        time.sleep((margin - second) % 60 + 0.5)
        now = lab.now()
    return now


def cron_at(epoch: float) -> str:
    """A daily cron expression (UTC) due at ``epoch``'s minute."""
    moment = time.gmtime(epoch)
    return f"{moment.tm_min} {moment.tm_hour} * * *"


def iso(epoch: float) -> str:
    """``epoch`` as the app's JSON writes a due (UTC, seconds)."""
    return time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(epoch))


def epoch(text: str) -> float:
    """An instant of the app's JSON as epoch seconds."""
    from datetime import datetime

    return datetime.fromisoformat(text).timestamp()


def wait_for(check: Any, timeout: float, what: str, every: float = 2.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise LabError(f"{what}: not within {timeout:.0f} s (last: {value!r})")
        time.sleep(every)
