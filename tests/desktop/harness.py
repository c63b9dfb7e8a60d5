"""The machinery behind tests/desktop/conftest.py: child processes with collected output, and
handles on the fake desktop services (their call logs and control interfaces).

Importable from tests (`from tests.desktop.harness import Child, FakeDesktop`) for type hints and
helpers; the fixtures themselves live in conftest.py.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import IO, Any, NoReturn

import pytest
from jeepney import DBusAddress, new_method_call
from jeepney.io.blocking import DBusConnection
from jeepney.wrappers import unwrap_msg

from tests.desktop.fakebus import CONTROL_INTERFACE, CONTROL_PATH

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
FAKE_DESKTOP = HERE / "fake_desktop.py"
FAKE_LOGIND = HERE / "fake_logind.py"
FAKE_NETWORKMANAGER = HERE / "fake_networkmanager.py"
FAKE_UPOWER = HERE / "fake_upower.py"

READY_TIMEOUT = 10.0
STOP_TIMEOUT = 5.0
POLL_INTERVAL = 0.02

# A bus of our own for the "system" bus: like session.conf but with no service directories, so
# that nothing gets auto-activated on it (the session dirs hold systemd1 and keyring services).
SYSTEM_BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:tmpdir=/tmp</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""


def require_desktop_env() -> None:
    missing = [name for name in ("DBUS_SESSION_BUS_ADDRESS", "DISPLAY") if not os.environ.get(name)]
    if missing:
        pytest.fail(
            f"{' and '.join(missing)} not set: desktop tests need a session bus and a display; "
            "run them with `make test-desktop` (dbus-run-session -- xvfb-run ...)",
            pytrace=False,
        )


class Child:
    """A child process whose stdout lines and stderr are collected by reader threads."""

    def __init__(
        self, argv: Sequence[str], env: Mapping[str, str], cwd: Path | str | None = None
    ) -> None:
        self.argv = list(argv)
        self.started = time.monotonic()
        self._lines: list[str] = []
        self._stderr: list[str] = []
        self._changed = threading.Condition()
        self.process = subprocess.Popen(
            self.argv,
            env=dict(env),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
        )
        assert self.process.stdout is not None and self.process.stderr is not None
        self._readers = [
            threading.Thread(
                target=self._read, args=(self.process.stdout, self._lines), daemon=True
            ),
            threading.Thread(
                target=self._read, args=(self.process.stderr, self._stderr), daemon=True
            ),
        ]
        for reader in self._readers:
            reader.start()

    def _read(self, stream: IO[str], into: list[str]) -> None:
        for line in stream:
            with self._changed:
                into.append(line.rstrip("\n"))
                self._changed.notify_all()
        with self._changed:  # EOF: wake waiters so they can notice the process is gone
            self._changed.notify_all()

    @property
    def pid(self) -> int:
        return self.process.pid

    def lines(self) -> list[str]:
        """stdout so far, one item per line."""
        with self._changed:
            return list(self._lines)

    def stderr(self) -> str:
        with self._changed:
            return "\n".join(self._stderr)

    def events(self) -> list[dict[str, Any]]:
        """The stdout lines that are JSON objects (e.g. qt_probe.py's events)."""
        found = []
        for line in self.lines():
            if line.startswith("{"):
                try:
                    found.append(json.loads(line))
                except json.JSONDecodeError:
                    continue
        return found

    def wait_for_line(self, predicate: Callable[[str], bool] | str, timeout: float = 30.0) -> str:
        """The first stdout line matching (or equal to, for a str); fails after timeout."""
        match = (lambda line: line == predicate) if isinstance(predicate, str) else predicate
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                for line in self._lines:
                    if match(line):
                        return line
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._finished():
                    break
                self._changed.wait(min(remaining, 0.2))
        self._fail(f"no stdout line matching {predicate!r} within {timeout} s")

    def wait_for_event(
        self, event: str, count: int = 1, timeout: float = 30.0, **fields: Any
    ) -> list[dict[str, Any]]:
        """Wait until `count` JSON events named `event` (with these field values) were printed."""
        deadline = time.monotonic() + timeout
        while True:
            found = [
                e
                for e in self.events()
                if e.get("event") == event and all(e.get(k) == v for k, v in fields.items())
            ]
            if len(found) >= count:
                return found
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self._finished():
                break
            with self._changed:
                self._changed.wait(min(remaining, 0.2))
        self._fail(f"wanted {count} {event!r} event(s) {fields or ''} within {timeout} s")

    def _finished(self) -> bool:
        return self.process.poll() is not None and not any(r.is_alive() for r in self._readers)

    def _fail(self, what: str) -> NoReturn:
        status = self.process.poll()
        state = "running" if status is None else f"exited with {status}"
        out = "\n".join(self.lines()[-30:])
        pytest.fail(
            f"{Path(self.argv[1] if len(self.argv) > 1 else self.argv[0]).name} ({state}): {what}\n"
            f"--- stdout (last 30 lines)\n{out}\n--- stderr\n{self.stderr()}",
            pytrace=False,
        )

    def stop(self, timeout: float = STOP_TIMEOUT) -> int:
        """Terminate (then kill), reap, drain and close the pipes; returns the exit status."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
        status = self.process.wait()
        for reader in self._readers:
            reader.join(timeout)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()
        return status

    def report(self) -> str:
        status = self.process.poll()
        return f"$ {' '.join(self.argv)}\n[exit status {status}]\n{self.stderr()}"


def child_env(tmp_path: Path, overrides: Mapping[str, str | None] | None = None) -> dict[str, str]:
    """The environment of this test (buses, display) plus what a GUI child needs."""
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"  # line-by-line stdout, or the test waits for a full buffer
    env["QT_QPA_PLATFORM"] = "xcb"  # a stray "offscreen" would hide the tray and showMessage
    # Each test gets its own config/data/state so app instances of different tests don't meet.
    for var, sub in (
        ("XDG_CONFIG_HOME", "config"),
        ("XDG_DATA_HOME", "data"),
        ("XDG_STATE_HOME", "state"),
        ("XDG_CACHE_HOME", "cache"),
    ):
        path = tmp_path / "xdg" / sub
        path.mkdir(parents=True, exist_ok=True)
        env[var] = str(path)
    for key, value in (overrides or {}).items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


Spawn = Callable[..., Child]


class _FakeService:
    """What the two fakes share: the process, its call log and its control interface."""

    bus_name: str

    def __init__(self, child: Child, log_path: Path, control: DBusConnection) -> None:
        self.child = child
        self.log_path = log_path
        self._control = control

    def calls(self, method: str | None = None) -> list[dict[str, Any]]:
        """Every call recorded so far (optionally only those to `method`), oldest first."""
        if not self.log_path.exists():
            return []
        text = self.log_path.read_text(encoding="utf-8")
        # Only complete lines: the fake may be halfway through writing the last one.
        entries = [
            json.loads(line) for line in text.splitlines(keepends=True) if line.endswith("\n")
        ]
        return [e for e in entries if method is None or e["method"] == method]

    def wait_for(self, method: str, count: int = 1, timeout: float = 30.0) -> list[dict[str, Any]]:
        """Wait until `method` was called at least `count` times; returns those calls."""
        deadline = time.monotonic() + timeout
        while True:
            found = self.calls(method)
            if len(found) >= count:
                return found
            if time.monotonic() >= deadline or self.child.process.poll() is not None:
                break
            time.sleep(POLL_INTERVAL)
        seen = [(c["method"], c["args"]) for c in self.calls()]
        pytest.fail(
            f"{self.bus_name}: wanted {count} call(s) to {method} within {timeout} s, got "
            f"{len(found)}; all calls: {seen}\n--- fake's stderr\n{self.child.stderr()}",
            pytrace=False,
        )

    def control(self, member: str, signature: str, *args: Any) -> Any:
        address = DBusAddress(CONTROL_PATH, bus_name=self.bus_name, interface=CONTROL_INTERFACE)
        reply = self._control.send_and_get_reply(
            new_method_call(address, member, signature, args), timeout=5
        )
        return unwrap_msg(reply)[0]


class FakeDesktop(_FakeService):
    bus_name = "org.freedesktop.Notifications"

    def __init__(
        self, child: Child, log_path: Path, control: DBusConnection, notify_delay: float
    ) -> None:
        super().__init__(child, log_path, control)
        self.notify_delay = notify_delay

    def invoke_action(self, notification_id: int, key: str = "default") -> float:
        """Emit ActionInvoked(id, key) as if the user clicked; returns the monotonic send time."""
        return float(self.control("EmitActionInvoked", "us", notification_id, key))

    def close_notification(self, notification_id: int, reason: int = 2) -> float:
        """Emit NotificationClosed(id, reason) (2: dismissed by the user); returns send time."""
        return float(self.control("EmitNotificationClosed", "uu", notification_id, reason))


class FakeLogind(_FakeService):
    bus_name = "org.freedesktop.login1"

    def prepare_for_sleep(self, going_to_sleep: bool) -> float:
        """Emit PrepareForSleep(going_to_sleep); returns the monotonic time it was sent."""
        return float(self.control("EmitPrepareForSleep", "b", going_to_sleep))

    def inhibitors_held(self) -> int:
        """How many fds handed out by Inhibit are still open somewhere."""
        return int(self.control("CountInhibitors", ""))

    def set_idle(self, idle: bool, since: datetime) -> None:
        """The session's IdleHint, and the instant of its last change (IdleSinceHint)."""
        self.control("SetIdleHint", "bt", idle, round(since.timestamp() * 1e6))


class FakeNetworkManager(_FakeService):
    """fake_networkmanager.py: NetworkManager's numbers (see that file for the values)."""

    bus_name = "org.freedesktop.NetworkManager"

    def update(
        self,
        *,
        state: int | None = None,
        connectivity: int | None = None,
        metered: int | None = None,
        primary: str | None = None,
    ) -> float:
        """Change the given values and announce them; returns the monotonic time sent.

        state 70 connected-global, 20 disconnected; connectivity 4 full, 1 none, 2 portal,
        3 limited; metered 1 yes, 2 no (3/4 guesses); primary "ethernet", "wifi",
        "bluetooth", "modem" or "none".
        """
        changes: dict[str, tuple[str, Any]] = {}
        for key, sig, value in (
            ("State", "u", state),
            ("Connectivity", "u", connectivity),
            ("Metered", "u", metered),
            ("Primary", "s", primary),
        ):
            if value is not None:
                changes[key] = (sig, value)
        return float(self.control("Update", "a{sv}", changes))

    def go_offline(self) -> float:
        return self.update(state=20, connectivity=1, primary="none")

    def go_online(self, primary: str = "ethernet") -> float:
        return self.update(state=70, connectivity=4, primary=primary)


class FakeUPower(_FakeService):
    """fake_upower.py: a laptop's power supply (see that file for the objects)."""

    bus_name = "org.freedesktop.UPower"

    def update(
        self,
        *,
        on_battery: bool | None = None,
        percentage: float | None = None,
        state: int | None = None,
        battery: bool | None = None,
    ) -> float:
        """Change the given values and announce them; returns the monotonic time sent.

        state 1 charging, 2 discharging, 4 fully charged (follows on_battery unless given);
        battery False removes the battery (a desktop machine).
        """
        changes: dict[str, tuple[str, Any]] = {}
        for key, sig, value in (
            ("OnBattery", "b", on_battery),
            ("Percentage", "d", None if percentage is None else float(percentage)),
            ("State", "u", state),
            ("Battery", "b", battery),
        ):
            if value is not None:
                changes[key] = (sig, value)
        return float(self.control("Update", "a{sv}", changes))


def start_fake(script: Path, args: Sequence[str], log_path: Path, env: Mapping[str, str]) -> Child:
    child = Child([sys.executable, str(script), "--log", str(log_path), *args], env, REPO)
    try:
        child.wait_for_line("READY", timeout=READY_TIMEOUT)
    except BaseException:
        child.stop()
        raise
    return child


def read_first_line(stream: IO[str], timeout: float) -> str:
    # A bounded wait: readline() alone would hang for ever on a daemon that never prints.
    with selectors.DefaultSelector() as selector:
        selector.register(stream, selectors.EVENT_READ)
        if not selector.select(timeout):
            return ""
    return stream.readline().strip()
