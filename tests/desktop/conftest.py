"""Fixtures for the desktop stage (`make test-desktop`): a fake desktop on the session bus, a
private bus playing the system bus with a fake logind on it, and child processes run in that env.

These tests need the session bus and virtual screen of `make test-desktop`
(`dbus-run-session -- xvfb-run ...`). Without them the fixtures fail rather than skip: a desktop
test that silently does not run looks exactly like one that passes.

Fixtures:
  fake_desktop          a running fake_desktop.py (Notifications + StatusNotifierWatcher);
                        a FakeDesktop: .calls(method=None), .wait_for(method, count=1, timeout=30),
                        .invoke_action(id, key="default"), .close_notification(id, reason=2)
  start_fake_desktop    factory: start_fake_desktop(notify_delay=0.0) -> FakeDesktop
  system_bus            the address of a private dbus-daemon, exported as DBUS_SYSTEM_BUS_ADDRESS
                        for the test and the children it starts
  fake_logind           a running fake_logind.py on system_bus; a FakeLogind:
                        .prepare_for_sleep(going_to_sleep) -> monotonic send time,
                        .calls(...), .wait_for(...), .inhibitors_held()
  fake_networkmanager   a running fake_networkmanager.py on system_bus; a FakeNetworkManager:
                        .update(state=, connectivity=, metered=, primary=) -> send time,
                        .go_offline(), .go_online(primary="ethernet"), .calls(...)
  fake_upower           a running fake_upower.py on system_bus; a FakeUPower:
                        .update(on_battery=, percentage=, state=, battery=) -> send time
  fake_udisks2          a running fake_udisks2.py on system_bus; a FakeUDisks2:
                        .plug(name, label, uuid), .mount(name, where), .unmount(name),
                        .unplug(name) -> send time
  app                   the headless app under libfaketime (headless_app.App), not started:
                        .cli(...), .at(when), .start(), .poke(), .runs(id), .log()
  real_dunst            Debian's dunst on this test's session bus (realdesktop.py): a RealDunst:
                        .count_displayed(), .wait_for_count(n), .received(), .history(),
                        .invoke_default_action(index=0), .close_all()
  real_panel            xfce4-panel (systray plugin = StatusNotifierWatcher + host), preseeded;
                        a RealPanel: .registered_items(), .wait_for_items(n),
                        .item_property(item, name)
  real_wm               xfwm4 managing the screen (for dialogs); windows by title with
                        realdesktop.find_windows / wait_for_window
                        The real_* fixtures and fake_desktop own the same bus names: one test
                        uses one or the other (asking for both fails).
  spawn                 factory: spawn(argv, env=None, cwd=None) -> Child; every child is killed
                        at teardown and its stderr printed (pytest shows it when the test fails)

Times (`t` in call logs, send times, a probe's events) are time.monotonic(): on Linux that is
CLOCK_MONOTONIC, one clock for every process, so they can be subtracted across processes.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

import pytest
from jeepney.io.blocking import DBusConnection, open_dbus_connection

from tests.desktop import headless_app, realdesktop
from tests.desktop.harness import (
    FAKE_DESKTOP,
    FAKE_LOGIND,
    FAKE_NETWORKMANAGER,
    FAKE_UPOWER,
    READY_TIMEOUT,
    REPO,
    STOP_TIMEOUT,
    SYSTEM_BUS_CONFIG,
    Child,
    FakeDesktop,
    FakeLogind,
    FakeNetworkManager,
    FakeUPower,
    Spawn,
    child_env,
    read_first_line,
    require_desktop_env,
    start_fake,
)
from tests.desktop.udisks import FAKE_UDISKS2, FakeUDisks2


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator[Spawn]:
    """spawn(argv, env=None, cwd=None) -> Child, e.g. spawn([sys.executable, "-m", "domi_desktop"]).

    The child gets this test's environment (session bus, display, DBUS_SYSTEM_BUS_ADDRESS if
    system_bus is in use), QT_QPA_PLATFORM=xcb, unbuffered Python output and per-test XDG
    config/data/state/cache dirs under tmp_path; `env` entries override (None removes).
    """
    require_desktop_env()
    children: list[Child] = []

    def start(
        argv: Sequence[str],
        env: Mapping[str, str | None] | None = None,
        cwd: Path | str | None = REPO,
    ) -> Child:
        child = Child(argv, child_env(tmp_path, env), cwd)
        children.append(child)
        return child

    yield start
    for child in reversed(children):
        child.stop()
        print(child.report())  # shown by pytest only when the test failed


@pytest.fixture
def start_fake_desktop(tmp_path: Path) -> Iterator[Callable[..., FakeDesktop]]:
    """start_fake_desktop(notify_delay=0.0) -> FakeDesktop (at most one per test: the names)."""
    require_desktop_env()
    started: list[tuple[FakeDesktop, DBusConnection]] = []

    def start(notify_delay: float = 0.0) -> FakeDesktop:
        assert not started, "one fake desktop per test: it owns well-known names"
        log_path = tmp_path / "fake_desktop.jsonl"
        child = start_fake(
            FAKE_DESKTOP, ["--notify-delay", str(notify_delay)], log_path, child_env(tmp_path)
        )
        control = open_dbus_connection("SESSION")
        fake = FakeDesktop(child, log_path, control, notify_delay)
        started.append((fake, control))
        return fake

    yield start
    for fake, control in started:
        control.close()
        fake.child.stop()
        print(fake.child.report())


@pytest.fixture
def fake_desktop(start_fake_desktop: Callable[..., FakeDesktop]) -> FakeDesktop:
    return start_fake_desktop()


@pytest.fixture
def system_bus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A private dbus-daemon standing in for the system bus (libdbus, so QtDBus, honours
    DBUS_SYSTEM_BUS_ADDRESS); exported for this test and every child it starts."""
    require_desktop_env()
    config = tmp_path / "system-bus.conf"
    config.write_text(SYSTEM_BUS_CONFIG, encoding="utf-8")
    daemon = subprocess.Popen(
        ["dbus-daemon", f"--config-file={config}", "--nofork", "--print-address=1"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,  # only "Failed to set fd limit" noise when not privileged
        text=True,
    )
    assert daemon.stdout is not None
    try:
        address = read_first_line(daemon.stdout, READY_TIMEOUT)
        if not address:
            pytest.fail(f"dbus-daemon printed no address (status {daemon.poll()})", pytrace=False)
        monkeypatch.setenv("DBUS_SYSTEM_BUS_ADDRESS", address)
        yield address
    finally:
        daemon.terminate()
        try:
            daemon.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait()
        daemon.stdout.close()


@pytest.fixture
def fake_logind(system_bus: str, tmp_path: Path) -> Iterator[FakeLogind]:
    log_path = tmp_path / "fake_logind.jsonl"
    child = start_fake(FAKE_LOGIND, ["--address", system_bus], log_path, child_env(tmp_path))
    control = open_dbus_connection(system_bus)
    try:
        yield FakeLogind(child, log_path, control)
    finally:
        control.close()
        child.stop()
        print(child.report())


@pytest.fixture
def fake_networkmanager(system_bus: str, tmp_path: Path) -> Iterator[FakeNetworkManager]:
    log_path = tmp_path / "fake_networkmanager.jsonl"
    child = start_fake(
        FAKE_NETWORKMANAGER, ["--address", system_bus], log_path, child_env(tmp_path)
    )
    control = open_dbus_connection(system_bus)
    try:
        yield FakeNetworkManager(child, log_path, control)
    finally:
        control.close()
        child.stop()
        print(child.report())


@pytest.fixture
def fake_upower(system_bus: str, tmp_path: Path) -> Iterator[FakeUPower]:
    log_path = tmp_path / "fake_upower.jsonl"
    child = start_fake(FAKE_UPOWER, ["--address", system_bus], log_path, child_env(tmp_path))
    control = open_dbus_connection(system_bus)
    try:
        yield FakeUPower(child, log_path, control)
    finally:
        control.close()
        child.stop()
        print(child.report())


@pytest.fixture
def fake_udisks2(system_bus: str, tmp_path: Path) -> Iterator[FakeUDisks2]:
    log_path = tmp_path / "fake_udisks2.jsonl"
    child = start_fake(FAKE_UDISKS2, ["--address", system_bus], log_path, child_env(tmp_path))
    control = open_dbus_connection(system_bus)
    try:
        yield FakeUDisks2(child, log_path, control)
    finally:
        control.close()
        child.stop()
        print(child.report())


@pytest.fixture
def app(tmp_path: Path) -> Iterator[headless_app.App]:
    """The headless app under libfaketime (not started: a test adds its schedules first)."""
    made = headless_app.faked_app(tmp_path)
    try:
        yield made
    finally:
        made.close()


def real_desktop_env(tmp_path: Path) -> dict[str, str]:
    # NO_AT_BRIDGE: GTK would otherwise activate the accessibility bus for every program.
    return child_env(tmp_path, {"NO_AT_BRIDGE": "1"})


@pytest.fixture
def real_dunst(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[realdesktop.RealDunst]:
    require_desktop_env()
    realdesktop.refuse_fake_desktop(request.fixturenames, "real_dunst")
    realdesktop.require_programs(dunst="dunst", dunstctl="dunst")
    directory = tmp_path / "dunst"
    directory.mkdir()
    with open_dbus_connection("SESSION") as conn:
        dunst = realdesktop.start_dunst(real_desktop_env(tmp_path), directory, conn)
    try:
        yield dunst
    finally:
        dunst.process.stop()
        print(f"--- dunst\n{dunst.process.output()[-3000:]}")


@pytest.fixture
def xfconfd(tmp_path: Path) -> Iterator[realdesktop.DesktopProcess]:
    """Our own xfconfd (xfce settings), reading this test's XDG_CONFIG_HOME."""
    require_desktop_env()
    env = real_desktop_env(tmp_path)
    realdesktop.preseed_panel(Path(env["XDG_CONFIG_HOME"]))
    with open_dbus_connection("SESSION") as conn:
        daemon = realdesktop.start_xfconfd(env, tmp_path, conn)
    try:
        yield daemon
    finally:
        daemon.stop()


@pytest.fixture
def real_panel(
    xfconfd: realdesktop.DesktopProcess, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[realdesktop.RealPanel]:
    realdesktop.refuse_fake_desktop(request.fixturenames, "real_panel")
    realdesktop.require_programs(**{"xfce4-panel": "xfce4-panel"})
    conn = open_dbus_connection("SESSION")
    try:
        panel = realdesktop.start_panel(real_desktop_env(tmp_path), tmp_path, conn)
        try:
            yield panel
        finally:
            panel.process.stop()
            print(f"--- xfce4-panel\n{panel.process.output()[-3000:]}")
    finally:
        conn.close()


@pytest.fixture
def real_wm(xfconfd: realdesktop.DesktopProcess, tmp_path: Path) -> Iterator[realdesktop.RealWM]:
    realdesktop.require_programs(xfwm4="xfwm4", xprop="x11-utils", xdotool="xdotool")
    wm = realdesktop.start_wm(real_desktop_env(tmp_path), tmp_path)
    try:
        yield wm
    finally:
        wm.process.stop()
