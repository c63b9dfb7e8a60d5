"""Smoke-test a built or installed app on any OS: the one script every OS's CI job runs.

    python packaging/smoke_test.py EXECUTABLE [--set-os-zone] [--json]

EXECUTABLE is the app's command-line program:

- Linux    dist/domi-desktop/domi-desktop
- macOS    /Volumes/.../domi-desktop.app/Contents/MacOS/domi-desktop (the mounted .dmg)
- Windows  %LOCALAPPDATA%\\Programs\\domi-desktop\\domi-desktop-cli.exe (installed; the console one)

Checks, in order: ``--version``; ``preview`` with the bundled tzdata alone; ``preview`` in the OS
zone (a known non-UTC one: Asia/Tokyo; with ``--set-os-zone`` the OS zone itself is changed for the
check and restored, by ``tzutil`` on Windows and ``systemsetup`` on macOS, else ``TZ`` names it);
``secret list`` answers or says why not; ``--headless`` starts, ``status`` finds it through its
socket, an HTTPS job run with ``run-now`` succeeds against a local server whose CA is trusted for
that run only (``SSL_CERT_FILE``), a job that times out leaves no grandchild behind, a posted wake
message (Windows ``WM_POWERBROADCAST`` to the app's windows, Linux logind ``PrepareForSleep(false)``
on a private bus, macOS ``NSWorkspaceDidWakeNotification`` posted inside the app on SIGUSR1, which
``DOMI_TEST_WAKE_SIGNAL`` asks of it) shows as ``last_wake.reason`` "resume", and ``quit`` ends
it with exit 0. Before the app starts, ``conditions`` (the bundle's own condition source) must name
the Qt network backend it reads: a bundle without Qt's ``plugins/networkinformation/`` has none,
and fails.

On Linux and macOS each command runs with an empty environment (as ``env -i``), which proves the
bundle needs nothing from the shell; Windows cannot start a process without its system variables,
so there it inherits them. Needs ``trustme`` (the test extra) for the HTTPS server's certificate,
and on Linux ``jeepney`` and ``dbus-daemon`` for the wake (else that step is skipped, saying so).
Exit 0 when every check passed; the results are printed (``--json`` for a machine).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
IS_WINDOWS = sys.platform == "win32"

PREVIEW = ["preview", "0 9 * * 1-5", "--tz", "Asia/Shanghai", "-n", "2"]
PREVIEW += ["--after", "2024-03-09T12:00:00+08:00", "--json"]
PREVIEW_NEXT = ["2024-03-11T09:00:00+08:00", "2024-03-12T09:00:00+08:00"]
FIRST_WAKE = "wake (start)"

OS_ZONE = "Asia/Tokyo"  # no daylight saving time: the offset is the same every day of the year
OS_ZONE_WINDOWS = "Tokyo Standard Time"
OS_ZONE_OFFSET = "+09:00"
LOCAL_PREVIEW = ["preview", "0 9 * * *", "-n", "1", "--after", "2024-03-09T12:00:00+00:00"]
LOCAL_PREVIEW += ["--json"]
NEVER = "0 0 1 1 *"  # the smoke test's schedules only run when asked (run-now)
JOB_TIMEOUT_S = 2


class SmokeError(AssertionError):
    """A check failed; the message says which and shows the output."""


def expected_version() -> str:
    text = (ROOT / "domi_desktop" / "__init__.py").read_text(encoding="utf-8")
    match = re.search(r'^__version__ = "([^"]+)"', text, re.M)
    if match is None:
        raise SmokeError("no __version__ in domi_desktop/__init__.py")
    return match.group(1)


def base_env(**extra: str) -> dict[str, str]:
    """An empty environment (``env -i``) plus ``extra``; on Windows the inherited one plus ``extra``."""
    env = dict(os.environ) if IS_WINDOWS else {}
    env.update(extra)
    return env


def run(
    exe: Path, *args: str, env: dict[str, str], timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(exe), *args], env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def _show(done: subprocess.CompletedProcess[str]) -> str:
    return f"exit {done.returncode}\nstdout: {done.stdout.strip()}\nstderr: {done.stderr.strip()}"


def check_version(exe: Path, env: dict[str, str]) -> str:
    done = run(exe, "--version", env=env)
    want = f"domi-desktop {expected_version()}"
    if done.returncode != 0 or done.stdout.strip() != want:
        raise SmokeError(f"--version: expected {want!r}\n{_show(done)}")
    return done.stdout.strip()


def check_preview(exe: Path, env: dict[str, str]) -> None:
    """Asia/Shanghai from the bundled tzdata alone: PYTHONTZPATH empty hides the OS database."""
    done = run(exe, *PREVIEW, env={**env, "PYTHONTZPATH": ""})
    try:
        fires = json.loads(done.stdout)["next"]
    except (ValueError, KeyError, TypeError):
        fires = None
    if done.returncode != 0 or fires != PREVIEW_NEXT:
        raise SmokeError(f"preview: expected the fires {PREVIEW_NEXT}\n{_show(done)}")


def check_secret_list(exe: Path, env: dict[str, str]) -> str:
    """The OS keyring answers, or one clear line says why not (no keyring, locked...): no traceback."""
    done = run(exe, "secret", "list", env=env)
    clear = done.returncode == 0 or (
        done.returncode == 2 and done.stderr.startswith("domi-desktop: ")
    )
    if not clear or "Traceback" in done.stderr:
        raise SmokeError(f"secret list: expected the names or one clear message\n{_show(done)}")
    if done.returncode == 0:
        return "the OS keyring answered"
    message = done.stderr.strip().removeprefix("domi-desktop: ")
    return message if len(message) <= 70 else message[:67] + "..."


def check_local_zone(exe: Path, env: dict[str, str], set_os_zone: bool) -> str:
    """``preview`` with the default zone "local" reads the OS zone: a known non-UTC one here."""
    with _os_zone(set_os_zone) as how:
        zone_env = dict(env)
        if how == "TZ":
            zone_env["TZ"] = OS_ZONE
        else:
            zone_env.pop("TZ", None)
        done = run(exe, *LOCAL_PREVIEW, env=zone_env)
    try:
        first = json.loads(done.stdout)["next"][0]
    except (ValueError, KeyError, TypeError, IndexError):
        first = None
    if done.returncode != 0 or not isinstance(first, str) or not first.endswith(OS_ZONE_OFFSET):
        raise SmokeError(f"preview in the OS zone {OS_ZONE} ({how}): expected a fire at "
                         f"{OS_ZONE_OFFSET}\n{_show(done)}")  # fmt: skip
    return f"{OS_ZONE} set by {how}: next fire {first}"


@contextlib.contextmanager
def _os_zone(set_os_zone: bool) -> Iterator[str]:
    """Sets the OS zone for the ``with`` block and restores it; yields how the zone is named."""
    if not set_os_zone:
        yield "TZ"
        return
    if IS_WINDOWS:
        before = subprocess.run(["tzutil", "/g"], capture_output=True, text=True, check=True)
        subprocess.run(["tzutil", "/s", OS_ZONE_WINDOWS], check=True)
        try:
            yield f"tzutil /s {OS_ZONE_WINDOWS!r}"
        finally:
            subprocess.run(["tzutil", "/s", before.stdout.strip()], check=True)
    elif sys.platform == "darwin":
        before = subprocess.run(["sudo", "-n", "systemsetup", "-gettimezone"],
                                capture_output=True, text=True, check=True)  # fmt: skip
        previous = before.stdout.split(":", 1)[-1].strip()
        subprocess.run(["sudo", "-n", "systemsetup", "-settimezone", OS_ZONE],
                       capture_output=True, check=True)  # fmt: skip
        try:
            yield f"systemsetup -settimezone {OS_ZONE}"
        finally:
            subprocess.run(["sudo", "-n", "systemsetup", "-settimezone", previous],
                           capture_output=True, check=True)  # fmt: skip
    else:
        # Changing /etc/localtime needs root and would touch the whole machine: TZ is the way a
        # Linux session names its zone too.
        yield "TZ"


def check_headless(
    exe: Path, env: dict[str, str], data_dir: Path, *, stop: str = "quit"
) -> dict[str, float]:
    """Start ``--headless``, wait for its first wake, stop it; the seconds each step took.

    ``stop`` is "quit" (over the app's socket, every OS) or "signal" (SIGTERM, not on Windows).
    """
    with Headless(exe, env, data_dir, stop=stop) as app:
        pass
    return {"first_wake_s": app.first_wake_s, "stop_s": app.stop_s}


class Headless:
    """``--headless`` from its first wake to a clean stop; ``cli`` runs commands against it."""

    def __init__(
        self, exe: Path, env: dict[str, str], data_dir: Path, *, stop: str = "quit"
    ) -> None:
        self.exe = exe
        self.env = {**env, "DOMI_DATA_DIR": str(data_dir)}
        self.data_dir = data_dir
        self.stop = stop
        self.log = data_dir / "headless.stderr"
        self.process: subprocess.Popen[bytes] | None = None
        self.first_wake_s = 0.0
        self.stop_s = 0.0

    def cli(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return run(self.exe, *args, env=self.env, timeout=timeout)

    def cli_json(self, *args: str, timeout: float = 60) -> Any:
        # Before a "--": what follows it is the job's command.
        split = args.index("--") if "--" in args else len(args)
        done = self.cli(*args[:split], "--json", *args[split:], timeout=timeout)
        try:
            return json.loads(done.stdout)
        except ValueError:
            raise SmokeError(f"{' '.join(args)}: expected JSON\n{_show(done)}") from None

    def __enter__(self) -> Headless:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        with self.log.open("wb") as stderr:
            started = time.perf_counter()
            self.process = subprocess.Popen(
                [str(self.exe), "--headless"],
                env=self.env, stdout=subprocess.DEVNULL, stderr=stderr,
            )  # fmt: skip
        try:
            self.first_wake_s = _wait_for_log(self.process, self.log, FIRST_WAKE, started, 30)
        except BaseException:
            self._kill()
            raise
        return self

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        assert self.process is not None
        try:
            if kind is None:
                stopping = time.perf_counter()
                if self.stop == "signal":
                    self.process.send_signal(signal.SIGTERM)
                else:
                    done = self.cli("quit")
                    if done.returncode != 0:
                        raise SmokeError(f"quit: the headless app did not take it\n{_show(done)}")
                code = self.process.wait(timeout=20)
                self.stop_s = time.perf_counter() - stopping
                text = self.log.read_text(encoding="utf-8", errors="replace")
                if code != 0 or "stopped" not in text or "Traceback" in text:
                    raise SmokeError(f"--headless: expected exit 0 and 'stopped', got exit {code}"
                                     f"\n{text}")  # fmt: skip
        finally:
            self._kill()

    def _kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def _wait_for_log(
    process: subprocess.Popen[bytes], log: Path, text: str, started: float, timeout: float
) -> float:
    deadline = started + timeout
    while time.perf_counter() < deadline:
        if text in log.read_text(encoding="utf-8", errors="replace"):
            return time.perf_counter() - started
        if process.poll() is not None:
            raise SmokeError(f"--headless exited {process.returncode} before {text!r}:\n"
                             + log.read_text(encoding="utf-8", errors="replace"))  # fmt: skip
        time.sleep(0.005)
    raise SmokeError(f"--headless: no {text!r} within {timeout:.0f} s:\n{log.read_text()}")


def _poll(condition: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


# --- in the running app -------------------------------------------------------------------------


def check_status(app: Headless) -> str:
    state = app.cli_json("status")
    if state.get("running") is not True:
        raise SmokeError(f"status: the running app was not found through its socket: {state}")
    return f"running, found through the socket in {state.get('data_dir')}"


class _Hello(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        body = b"hello over TLS\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextlib.contextmanager
def https_server(work: Path) -> Iterator[tuple[str, Path]]:
    """``(url, ca.pem)``: a local HTTPS server whose certificate a throw-away CA signed."""
    try:
        import trustme
    except ImportError:
        raise SmokeError("the HTTPS check needs trustme: pip install -e '.[test]'") from None
    ca = trustme.CA()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1", "localhost").configure_cert(context)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    ca_file = work / "smoke-ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}/hello", ca_file
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def check_https(app: Headless, url: str) -> str:
    created = app.cli_json("schedule", "add", "smoke-https", "--cron", NEVER, "--http", url)
    result = app.cli_json("run-now", str(created["id"]))
    if result.get("status") != "succeeded" or "hello over TLS" not in (
        result.get("output_tail") or ""
    ):
        raise SmokeError(f"run-now of an HTTPS job: expected success, got {result}")  # fmt: skip
    return f"{url} verified against a CA trusted for this run"


GRANDCHILD = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
open(sys.argv[1], "w").write(str(child.pid))
time.sleep(300)
"""


def check_timeout(app: Headless, work: Path) -> str:
    """A job that starts a grandchild and overruns: after the timeout, both are gone."""
    pid_file = work / "grandchild.pid"
    command = [sys.executable, "-c", GRANDCHILD, str(pid_file)]
    created = app.cli_json("schedule", "add", "smoke-timeout", "--cron", NEVER,
                           "--timeout", str(JOB_TIMEOUT_S), "--", *command)  # fmt: skip
    result = app.cli_json("run-now", str(created["id"]), timeout=120)
    if result.get("status") != "timed_out":
        raise SmokeError(f"run-now of a job past its timeout: expected timed_out, got {result}")
    try:
        pid = int(pid_file.read_text())
    except (OSError, ValueError):
        raise SmokeError(f"the job never started its grandchild: {result}") from None
    if not _poll(lambda: not process_alive(pid), 10):
        raise SmokeError(f"the job's grandchild {pid} outlived the timeout")
    return f"timed out after {JOB_TIMEOUT_S} s; grandchild {pid} gone"


def process_alive(pid: int) -> bool:
    if IS_WINDOWS:
        import ctypes

        kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined,unused-ignore]
        handle = kernel32.OpenProcess(0x00100000 | 0x1000, False, pid)  # SYNCHRONIZE, QUERY_LIMITED
        if not handle:
            return False
        try:
            return bool(kernel32.WaitForSingleObject(handle, 0) == 0x102)  # WAIT_TIMEOUT: running
        finally:
            kernel32.CloseHandle(handle)
    stat = Path(f"/proc/{pid}/stat")
    if stat.exists():  # Linux: a zombie has exited (a container's PID 1 may never reap it)
        with contextlib.suppress(OSError):
            return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def check_wake(app: Headless, post: Callable[[int], str] | None, skipped: str) -> str:
    """A posted wake message reaches the scheduler: ``last_wake.reason`` becomes "resume"."""
    if post is None:
        return f"skipped: {skipped}"
    assert app.process is not None
    how = post(app.process.pid)

    def resumed() -> bool:
        last = app.cli_json("status").get("last_wake") or {}
        return bool(last.get("reason") == "resume")

    if not _poll(resumed, 15):
        raise SmokeError(f"wake: {how}, but status never showed last_wake.reason 'resume':\n"
                         f"{app.cli_json('status')}")  # fmt: skip
    return f"{how}: last_wake.reason resume"


def post_wm_powerbroadcast(pid: int) -> str:
    """PBT_APMRESUMEAUTOMATIC to every window of ``pid``, message-only windows included."""
    import ctypes
    from ctypes import wintypes

    user32 = ctypes.windll.user32  # type: ignore[attr-defined,unused-ignore]
    windows: list[int] = []

    def owned(hwnd: int) -> bool:
        owner = wintypes.DWORD()
        user32.GetWindowThreadProcessId(hwnd, ctypes.byref(owner))
        return owner.value == pid

    callback_type = ctypes.WINFUNCTYPE(wintypes.BOOL, wintypes.HWND, wintypes.LPARAM)  # type: ignore[attr-defined,unused-ignore]

    def collect(hwnd: int, _lparam: int) -> bool:
        if owned(hwnd):
            windows.append(hwnd)
        return True

    user32.EnumWindows(callback_type(collect), 0)
    message_only = -3  # HWND_MESSAGE
    hwnd = user32.FindWindowExW(message_only, None, None, None)
    while hwnd:
        if owned(hwnd):
            windows.append(hwnd)
        hwnd = user32.FindWindowExW(message_only, hwnd, None, None)
    if not windows:
        raise SmokeError(f"wake: the app (pid {pid}) has no window to post WM_POWERBROADCAST to")
    for window in windows:
        user32.PostMessageW(window, 0x0218, 0x12, 0)  # WM_POWERBROADCAST, PBT_APMRESUMEAUTOMATIC
    return f"WM_POWERBROADCAST posted to {len(windows)} window(s)"


TEST_WAKE_SIGNAL = "DOMI_TEST_WAKE_SIGNAL"
"""Set for the app on macOS: SIGUSR1 then posts NSWorkspaceDidWakeNotification inside it (the
system posts it to the woken process alone; domi_desktop/platform/resume/macos.py)."""


def post_workspace_wake(pid: int) -> str:
    os.kill(pid, signal.SIGUSR1)
    return "NSWorkspaceDidWakeNotification posted inside the app (SIGUSR1)"


class PrivateLogind:
    """A private D-Bus bus on which the smoke test owns org.freedesktop.login1 and can emit
    PrepareForSleep; the app listens to it through DBUS_SYSTEM_BUS_ADDRESS."""

    def __init__(self) -> None:
        self.address = ""
        self._daemon: subprocess.Popen[str] | None = None
        self._connection: Any = None

    def __enter__(self) -> PrivateLogind:
        self._daemon = subprocess.Popen(
            ["dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address=1"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )  # fmt: skip
        assert self._daemon.stdout is not None
        self.address = self._daemon.stdout.readline().strip()
        from jeepney.bus_messages import message_bus
        from jeepney.io.blocking import open_dbus_connection

        self._connection = open_dbus_connection(self.address)
        self._connection.send_and_get_reply(message_bus.RequestName("org.freedesktop.login1"))
        return self

    def post_resume(self, _pid: int) -> str:
        from jeepney import new_signal
        from jeepney.wrappers import DBusAddress

        manager = DBusAddress(
            "/org/freedesktop/login1",
            bus_name="org.freedesktop.login1",
            interface="org.freedesktop.login1.Manager",
        )
        self._connection.send(new_signal(manager, "PrepareForSleep", "b", (False,)))
        return "logind PrepareForSleep(false) on a private bus"

    def __exit__(self, *_: object) -> None:
        if self._connection is not None:
            self._connection.close()
        if self._daemon is not None:
            self._daemon.terminate()
            self._daemon.wait(10)
            if self._daemon.stdout is not None:
                self._daemon.stdout.close()


def linux_logind() -> tuple[PrivateLogind | None, str]:
    if shutil.which("dbus-daemon") is None:
        return None, "no dbus-daemon for a private bus"
    try:
        import jeepney  # noqa: F401
    except ImportError:
        return None, "jeepney is not installed for the Python running the smoke test"
    return PrivateLogind(), ""


# --- the OS's network and power state ----------------------------------------------------------

NETWORK_BACKEND = re.compile(r"network information from Qt's (?!dummy )(\S+) backend")
"""A backend that reads the OS: without the plugins Qt falls back on its built-in "dummy" one,
which knows nothing (every network condition then waits on "unknown")."""


def check_conditions(exe: Path, env: dict[str, str]) -> str:
    """The bundle's own condition source must name a Qt network backend: without Qt's
    ``plugins/networkinformation/`` it has none, and every network condition is silently off."""
    done = run(exe, "conditions", env=env, timeout=120)
    try:
        status = str(json.loads(done.stdout.splitlines()[0])["status"])
    except (ValueError, IndexError, KeyError, TypeError):
        raise SmokeError(f"conditions: expected a JSON line\n{_show(done)}") from None
    if NETWORK_BACKEND.search(status) is None:
        raise SmokeError(
            f"conditions: the bundle reads the network through no Qt backend: {status}"
        )
    return status


# --- all of it ----------------------------------------------------------------------------------


def in_the_running_app(exe: Path, env: dict[str, str], work: Path) -> dict[str, object]:
    results: dict[str, object] = {}
    logind, why = linux_logind() if sys.platform.startswith("linux") else (None, "")
    with contextlib.ExitStack() as stack:
        if logind is not None:
            stack.enter_context(logind)
            env = {**env, "DBUS_SYSTEM_BUS_ADDRESS": logind.address}
        url, ca_file = stack.enter_context(https_server(work))
        env = {**env, "SSL_CERT_FILE": str(ca_file)}  # the CA is trusted for this run only
        if sys.platform == "darwin":
            env[TEST_WAKE_SIGNAL] = "1"
        app = stack.enter_context(Headless(exe, env, work / "data"))
        post: Callable[[int], str] | None
        results["status"] = check_status(app)
        results["https"] = check_https(app, url)
        results["timeout"] = check_timeout(app, work)
        if IS_WINDOWS:
            post, skipped = post_wm_powerbroadcast, ""
        elif sys.platform == "darwin":
            post, skipped = post_workspace_wake, ""
        elif logind is not None:
            post, skipped = logind.post_resume, ""
        else:
            post, skipped = None, why
        results["wake"] = check_wake(app, post, skipped)
    results["headless"] = {"first_wake_s": app.first_wake_s, "stop_s": app.stop_s}
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("executable", type=Path, help="the app's command-line program")
    parser.add_argument(
        "--set-os-zone", action="store_true",
        help="change the OS zone for the zone check and restore it (CI runners only)",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object")
    args = parser.parse_args(argv)
    exe = args.executable.resolve()
    if not exe.is_file():
        print(f"smoke_test: no executable at {exe}", file=sys.stderr)
        return 1
    results: dict[str, object] = {"executable": str(exe)}
    with tempfile.TemporaryDirectory(prefix="domi-smoke-") as temp:
        home = Path(temp) / "home"
        home.mkdir()
        # HOME (and on Windows the profile folders) in the temp dir: no trace left in the real ones.
        env = base_env(HOME=str(home), QT_QPA_PLATFORM="offscreen")
        if IS_WINDOWS:
            env.update(APPDATA=str(home / "Roaming"), LOCALAPPDATA=str(home / "Local"))
        try:
            results["version"] = check_version(exe, env)
            check_preview(exe, env)
            results["preview"] = "Asia/Shanghai from the bundled tzdata"
            results["local_zone"] = check_local_zone(exe, env, args.set_os_zone)
            results["secret_list"] = check_secret_list(exe, env)
            results["conditions"] = check_conditions(exe, env)
            results.update(in_the_running_app(exe, env, Path(temp)))
        except (SmokeError, subprocess.SubprocessError, OSError) as error:
            print(f"smoke_test: FAILED {error}", file=sys.stderr)
            return 1
    if args.json:
        print(json.dumps(results))
    else:
        for key, value in results.items():
            print(f"{key:12} {value}")
        print("smoke_test: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
