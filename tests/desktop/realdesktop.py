"""A real desktop for the desktop stage: Debian's dunst, xfce4-panel (its systray plugin is the
StatusNotifierWatcher and host) and xfwm4, each on this test's session bus and display.

The fixtures live in conftest.py (real_dunst, real_panel, real_wm); this module starts the
processes and gives handles on them. Debian packages: dunst, xfce4-panel, xfwm4, xdotool,
x11-utils (xprop).

Real servers own the same well-known names as fake_desktop.py (org.freedesktop.Notifications,
org.kde.StatusNotifierWatcher): a test uses either the fake desktop or these, never both. The
fixtures check who owns each name once started, so a clash (or a dunst that the session bus
auto-activated from /usr/share/dbus-1/services/org.knopwob.dunst.service) fails loudly.

Measured with dunst 1.9.0 (Debian 12):
  - ActionInvoked and NotificationClosed are sent to the connection that called Notify only
    (unicast, with a destination): another connection's match rule does not see them. A fake
    that broadcasts them hides that an app must listen on the connection it notifies from.
  - `dunstctl action 0` invokes the "default" action of the first notification shown, as a left
    click does with `mouse_left_click = do_action, close_current` (our dunstrc; dunst's own
    default only closes). Without a "default" action it would open the context menu (dmenu),
    so dmenu is /bin/false here. Unlike a click it leaves the popup up: close_all() then
    sends NotificationClosed(id, 2), again to the notifying connection only.
  - `dunstctl history` holds notifications only once closed or expired, and has no urgency;
    `received()` (dunst -print) lists every notification dunst got, with its urgency.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest
from jeepney import DBusAddress, Properties, message_bus, new_method_call
from jeepney.io.blocking import DBusConnection, Proxy
from jeepney.wrappers import DBusErrorResponse, unwrap_msg

NOTIFICATIONS = "org.freedesktop.Notifications"
WATCHER = "org.kde.StatusNotifierWatcher"
WATCHER_PATH = "/StatusNotifierWatcher"
XFCONF = "org.xfce.Xfconf"
XFCONFD_PATTERNS = ("/usr/lib/*/xfce4/xfconf/xfconfd", "/usr/lib/xfce4/xfconf/xfconfd")
ITEM_INTERFACE = "org.kde.StatusNotifierItem"
DBUSMENU = "com.canonical.dbusmenu"

START_TIMEOUT = 10.0
STOP_TIMEOUT = 5.0
POLL = 0.02

T = TypeVar("T")

# Nothing expires on its own (0 = never), so a test counts what it sent; a click runs the action.
DUNSTRC = """[global]
    monitor = 0
    follow = none
    dmenu = /bin/false
    browser = /bin/false
    mouse_left_click = do_action, close_current
    mouse_middle_click = close_all
    mouse_right_click = close_current
    show_indicators = no
[urgency_low]
    timeout = 0
[urgency_normal]
    timeout = 0
[urgency_critical]
    timeout = 0
"""

# One panel at the top with only the systray plugin; a panel without a configuration shows a
# first-run dialog ("use default config?") and owns nothing until someone answers it.
PANEL_XML = """<?xml version="1.0" encoding="UTF-8"?>
<channel name="xfce4-panel" version="1.0">
  <property name="configver" type="int" value="2"/>
  <property name="panels" type="array">
    <value type="int" value="1"/>
    <property name="panel-1" type="empty">
      <property name="position" type="string" value="p=6;x=0;y=0"/>
      <property name="length" type="uint" value="100"/>
      <property name="position-locked" type="bool" value="true"/>
      <property name="size" type="uint" value="32"/>
      <property name="plugin-ids" type="array">
        <value type="int" value="1"/>
      </property>
    </property>
  </property>
  <property name="plugins" type="empty">
    <property name="plugin-1" type="string" value="systray"/>
  </property>
</channel>
"""

URGENCIES = {"LOW": 0, "NORMAL": 1, "CRITICAL": 2}


FAKE_DESKTOP_FIXTURES = frozenset({"fake_desktop", "start_fake_desktop"})


def refuse_fake_desktop(fixturenames: list[str], fixture: str) -> None:
    """A real server and the fake desktop own the same names: never both in one test."""
    clash = sorted(FAKE_DESKTOP_FIXTURES.intersection(fixturenames))
    if clash:
        pytest.fail(
            f"{fixture} and {', '.join(clash)} in one test: both own "
            f"{NOTIFICATIONS} / {WATCHER}; use the fake desktop or the real one",
            pytrace=False,
        )


def require_programs(**packages: str) -> None:
    """Fail (not skip) naming the Debian package of each missing program: {program: package}."""
    missing = sorted({pkg for prog, pkg in packages.items() if shutil.which(prog) is None})
    if missing:
        pytest.fail(
            f"not installed: {', '.join(missing)} (apt-get install {' '.join(missing)}); "
            "the real-desktop tests need them",
            pytrace=False,
        )


def wait_until(what: str, check: Callable[[], T | None], timeout: float) -> T:
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result is not None and result is not False:
            return result
        if time.monotonic() >= deadline:
            pytest.fail(f"timed out after {timeout} s waiting for {what}", pytrace=False)
        time.sleep(POLL)


class DesktopProcess:
    """A desktop program in its own process group (the panel starts plugin wrappers, which must
    go with it), output in a log file."""

    def __init__(self, argv: list[str], env: Mapping[str, str], log: Path) -> None:
        self.argv = argv
        self.log = log
        with open(log, "w", encoding="utf-8") as out:
            self.process = subprocess.Popen(
                argv,
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    @property
    def pid(self) -> int:
        return self.process.pid

    def owns(self, pid: int) -> bool:
        """Whether `pid` is this process or one it started (the panel's systray plugin runs in
        a wrapper process, which is what owns the watcher's name)."""
        try:
            return pid == self.process.pid or os.getpgid(pid) == self.process.pid
        except ProcessLookupError:
            return False

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def check_running(self) -> None:
        status = self.process.poll()
        if status is not None:
            pytest.fail(
                f"{self.argv[0]} exited with {status}:\n{self.output()[-3000:]}", pytrace=False
            )

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        with contextlib.suppress(ProcessLookupError):  # plugin wrappers the panel left
            os.killpg(self.process.pid, signal.SIGKILL)


def bus_name_owner_pid(conn: DBusConnection, name: str) -> int | None:
    bus = Proxy(message_bus, conn)
    try:
        (owner,) = bus.GetNameOwner(name)
        (pid,) = bus.GetConnectionUnixProcessID(owner)
    except DBusErrorResponse:
        return None
    return int(pid)


def wait_for_name(conn: DBusConnection, name: str, process: DesktopProcess) -> float:
    """Wait until `process` owns `name`; fail if it dies or someone else owns it (then stop
    it: a fixture that fails to start gets no teardown)."""
    try:
        return _wait_for_name(conn, name, process)
    except BaseException:
        process.stop()
        raise


def _wait_for_name(conn: DBusConnection, name: str, process: DesktopProcess) -> float:
    started = time.monotonic()
    deadline = started + START_TIMEOUT
    while time.monotonic() < deadline:
        process.check_running()
        pid = bus_name_owner_pid(conn, name)
        if pid is not None and process.owns(pid):
            return time.monotonic() - started
        if pid is not None:
            pytest.fail(
                f"{name} is owned by pid {pid}, not by our {process.argv[0]} ({process.pid}): "
                "a fake desktop in the same test, or a server the bus auto-activated",
                pytrace=False,
            )
        time.sleep(POLL)
    pytest.fail(f"{process.argv[0]} did not own {name} within {START_TIMEOUT} s", pytrace=False)


def find_xfconfd() -> str | None:
    for pattern in XFCONFD_PATTERNS:
        found = sorted(glob.glob(pattern))
        if found:
            return found[0]
    return None


def start_xfconfd(env: Mapping[str, str], log_dir: Path, conn: DBusConnection) -> DesktopProcess:
    """Our own xfconfd, reading XDG_CONFIG_HOME of `env`: one the bus auto-activated would
    read the configuration of whoever started the bus instead."""
    daemon = find_xfconfd()
    if daemon is None:
        pytest.fail("xfconfd not found: apt-get install xfconf", pytrace=False)
    process = DesktopProcess([daemon], env, log_dir / "xfconfd.log")
    wait_for_name(conn, XFCONF, process)
    return process


# --- dunst


@dataclass
class RealDunst:
    process: DesktopProcess
    print_log: Path
    env: Mapping[str, str]
    started_in: float

    def _dunstctl(self, *args: str) -> str:
        result = subprocess.run(
            ["dunstctl", *args], env=dict(self.env), capture_output=True, text=True, timeout=10
        )
        if result.returncode != 0:
            pytest.fail(f"dunstctl {' '.join(args)}: {result.stderr.strip()}", pytrace=False)
        return result.stdout

    def count_displayed(self) -> int:
        return int(self._dunstctl("count", "displayed"))

    def wait_for_count(self, count: int, timeout: float = 30.0) -> None:
        """Wait until exactly `count` notifications are displayed."""
        wait_until(
            f"dunst to display {count} notification(s)",
            lambda: self.count_displayed() == count or None,
            timeout,
        )

    def history(self) -> list[dict[str, Any]]:
        """`dunstctl history`, newest first, values unwrapped: summary, body, appname, id,
        default_action_name, ... Only notifications already closed or expired are there."""
        data = json.loads(self._dunstctl("history"))["data"]
        return [{key: field["data"] for key, field in entry.items()} for entry in data[0]]

    def received(self) -> list[dict[str, Any]]:
        """Every notification dunst received (its -print output), oldest first: appname,
        summary, body, icon, id (int), urgency (0 low, 1 normal, 2 critical), timeout (ms),
        actions ({key: label})."""
        return parse_dunst_print(self.print_log.read_text(encoding="utf-8", errors="replace"))

    def invoke_default_action(self, index: int = 0) -> None:
        """What a left click on the index-th notification shown does: its "default" action."""
        self._dunstctl("action", str(index))

    def close_all(self) -> None:
        self._dunstctl("close-all")


def parse_dunst_print(text: str) -> list[dict[str, Any]]:
    notifications: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    lines = iter(text.splitlines())
    for line in lines:
        if line == "{":
            current = {}
        elif line == "}" and current is not None:
            notifications.append(_typed(current))
            current = None
        elif current is not None and line.startswith("\t") and ": " in line:
            key, value = line[1:].split(": ", 1)
            if key == "actions" and value == "{}":
                current["actions"] = {}
                continue
            if key == "actions" and value == "{":
                actions: dict[str, str] = {}
                for action in lines:
                    if action.strip() == "}":
                        break
                    label_key, _, label = action.strip().rstrip(",").partition(": ")
                    actions[json.loads(label_key)] = json.loads(label)
                current["actions"] = actions
                continue
            if value.startswith("'"):
                while not (len(value) > 1 and value.endswith("'")):
                    value += "\n" + next(lines, "'")  # a quoted value goes on to its closing '
                value = value[1:-1]
            current[key] = value
    return notifications


def _typed(raw: dict[str, Any]) -> dict[str, Any]:
    typed = dict(raw)
    for key in ("id", "timeout", "progress"):
        if key in typed:
            typed[key] = int(typed[key])
    if "urgency" in typed:
        typed["urgency"] = URGENCIES.get(typed["urgency"], typed["urgency"])
    return typed


def start_dunst(env: Mapping[str, str], directory: Path, conn: DBusConnection) -> RealDunst:
    config = directory / "dunstrc"
    config.write_text(DUNSTRC, encoding="utf-8")
    print_log = directory / "dunst.print"
    started = time.monotonic()
    process = DesktopProcess(["dunst", "-config", str(config), "-print"], env, print_log)
    wait_for_name(conn, NOTIFICATIONS, process)
    return RealDunst(process, print_log, env, time.monotonic() - started)


# --- xfce4-panel


@dataclass
class RealPanel:
    process: DesktopProcess
    conn: DBusConnection
    started_in: float
    helpers: list[DesktopProcess] = field(default_factory=list)
    """What a panel started by a test needs and goes with it (xfconfd)."""

    def stop(self) -> None:
        """The panel, its helpers and the connection (for panels a test starts itself)."""
        try:
            self.process.stop()
            for helper in self.helpers:
                helper.stop()
        finally:
            self.conn.close()

    def registered_items(self) -> list[str]:
        """The watcher's RegisteredStatusNotifierItems ("bus-name/object-path" each)."""
        address = DBusAddress(WATCHER_PATH, bus_name=WATCHER, interface=WATCHER)
        reply = self.conn.send_and_get_reply(
            Properties(address).get("RegisteredStatusNotifierItems"), timeout=5
        )
        return list(unwrap_msg(reply)[0][1])

    def wait_for_items(self, count: int = 1, timeout: float = 30.0) -> list[str]:
        return wait_until(
            f"{count} StatusNotifierItem(s) registered with the panel",
            lambda: items if len(items := self.registered_items()) >= count else None,
            timeout,
        )

    def item_property(self, item: str, name: str) -> Any:
        """A property of a registered item (e.g. Status, IconName, ToolTip, Title), as given by
        registered_items() or as a bare bus name (then at /StatusNotifierItem)."""
        service, slash, path = item.partition("/")
        address = DBusAddress(
            "/" + path if slash else "/StatusNotifierItem",
            bus_name=service,
            interface=ITEM_INTERFACE,
        )
        reply = self.conn.send_and_get_reply(Properties(address).get(name), timeout=5)
        return unwrap_msg(reply)[0][1]

    def click_menu_entry(self, item: str, label: str) -> None:
        """What a click on the entry ``label`` of the item's menu sends (com.canonical.dbusmenu,
        as the panel's menu does)."""
        service = item.partition("/")[0]
        path = str(self.item_property(item, "Menu"))
        menu = DBusAddress(path, bus_name=service, interface=DBUSMENU)
        reply = self.conn.send_and_get_reply(
            new_method_call(menu, "GetLayout", "iias", (0, -1, [])), timeout=5
        )
        _revision, layout = unwrap_msg(reply)
        entry = _menu_entry(layout, label)
        assert entry is not None, f"no menu entry {label!r}"
        self.conn.send_and_get_reply(
            new_method_call(menu, "Event", "isvu", (entry, "clicked", ("i", 0), 0)), timeout=5
        )


def _menu_entry(layout: tuple[int, dict[str, Any], list[Any]], label: str) -> int | None:
    """The id of the entry labelled ``label`` in a dbusmenu layout (mnemonics' & ignored)."""
    entry, properties, children = layout
    shown = properties.get("label")
    if shown is not None and str(shown[1]).replace("&", "") == label:
        return int(entry)
    for _signature, child in children:
        found = _menu_entry(child, label)
        if found is not None:
            return found
    return None


def preseed_panel(config_home: Path) -> Path:
    channel = config_home / "xfce4" / "xfconf" / "xfce-perchannel-xml"
    channel.mkdir(parents=True, exist_ok=True)
    path = channel / "xfce4-panel.xml"
    path.write_text(PANEL_XML, encoding="utf-8")
    return path


def start_panel(env: Mapping[str, str], directory: Path, conn: DBusConnection) -> RealPanel:
    started = time.monotonic()
    process = DesktopProcess(
        ["xfce4-panel", "--disable-wm-check"], env, directory / "xfce4-panel.log"
    )
    wait_for_name(conn, WATCHER, process)
    return RealPanel(process, conn, time.monotonic() - started)


# --- xfwm4 and windows


@dataclass
class RealWM:
    process: DesktopProcess
    started_in: float


def window_manager_running(env: Mapping[str, str]) -> bool:
    result = subprocess.run(
        ["xprop", "-root", "_NET_SUPPORTING_WM_CHECK"],
        env=dict(env),
        capture_output=True,
        text=True,
        check=False,
    )
    return "window id" in result.stdout


def start_wm(env: Mapping[str, str], directory: Path) -> RealWM:
    started = time.monotonic()
    # No compositor: nothing to show on Xvfb, and it only adds start-up time and warnings.
    process = DesktopProcess(
        ["xfwm4", "--compositor=off", "--replace"], env, directory / "xfwm4.log"
    )

    def up() -> bool:
        process.check_running()
        return window_manager_running(env)

    try:
        wait_until("xfwm4 to manage the screen", up, START_TIMEOUT)
    except BaseException:
        process.stop()
        raise
    return RealWM(process, time.monotonic() - started)


def find_windows(
    title: str, env: Mapping[str, str] | None = None, *, visible: bool = False
) -> list[int]:
    """X window ids whose title matches the regular expression `title` (xdotool search);
    ``visible``: only those shown (a closed dialog may keep its hidden window)."""
    result = subprocess.run(
        ["xdotool", "search", *(["--onlyvisible"] if visible else []), "--name", title],
        env=dict(env or os.environ),
        capture_output=True,
        text=True,
        check=False,
    )
    return [int(line) for line in result.stdout.split()]


def wait_for_window(
    title: str,
    timeout: float = 30.0,
    env: Mapping[str, str] | None = None,
    *,
    visible: bool = False,
) -> int:
    """The first window whose title matches `title`, once there is one (``visible``: shown)."""
    windows = wait_until(
        f"a window titled {title!r}",
        lambda: find_windows(title, env, visible=visible) or None,
        timeout,
    )
    return windows[0]


def window_name(window: int, env: Mapping[str, str] | None = None) -> str:
    result = subprocess.run(
        ["xdotool", "getwindowname", str(window)],
        env=dict(env or os.environ),
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.strip()


# --- lxqt-panel and screenshots

LXQT_PANEL_CONF = """[General]
__userfile__=true
panels=panel1

[panel1]
alignment=-1
hidable=false
panelSize=32
iconSize=22
plugins=tray
position=Top
width=100
width-percent=true

[tray]
type=statusnotifier
"""
"""One panel along the top with one status notifier plugin (it owns the watcher itself)."""


def start_lxqt_panel(env: Mapping[str, str], directory: Path, conn: DBusConnection) -> RealPanel:
    config = Path(env["XDG_CONFIG_HOME"]) / "lxqt"
    config.mkdir(parents=True, exist_ok=True)
    (config / "panel.conf").write_text(LXQT_PANEL_CONF, encoding="utf-8")
    started = time.monotonic()
    process = DesktopProcess(["lxqt-panel"], env, directory / "lxqt-panel.log")
    wait_for_name(conn, WATCHER, process)
    return RealPanel(process, conn, time.monotonic() - started)


def screenshot(path: Path, env: Mapping[str, str] | None = None) -> Path:
    """The whole screen as a PNG (ImageMagick's ``import``)."""
    subprocess.run(
        ["import", "-window", "root", str(path)],
        env=dict(env or os.environ),
        check=True,
        timeout=60,
    )
    return path
