"""The Linux bundle and its tarball, built by ``packaging/build_linux.sh`` into a temp dir.

Slow (about 30 s to build) and so only with ``PACKAGE_TEST=1`` (``make package-test``). With
``DOMI_PACKAGE_DIST=DIR`` the tests check the bundle and tarball already built in DIR instead
(CI builds once, then runs these on what it uploads). Every run of the bundle is in an empty
environment, as ``env -i``: it must need nothing from the shell that started it.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

from domi_desktop import __version__

ROOT = Path(__file__).resolve().parents[2]
MAX_BUNDLE_BYTES = 120_000_000
MAX_DOWNLOAD_BYTES = 60_000_000

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        os.environ.get("PACKAGE_TEST") != "1",
        reason="builds the PyInstaller bundle: set PACKAGE_TEST=1 (make package-test)",
    ),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the Linux bundle"),
]


def _load_smoke_test() -> ModuleType:
    spec = importlib.util.spec_from_file_location("smoke_test", ROOT / "packaging/smoke_test.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


smoke = _load_smoke_test()


@dataclass(frozen=True)
class Built:
    bundle: Path
    tarball: Path
    build_seconds: float | None

    @property
    def exe(self) -> Path:
        return self.bundle / "domi-desktop"

    @property
    def internal(self) -> Path:
        return self.bundle / "_internal"


@pytest.fixture(scope="module")
def built(linux_dist: tuple[Path, float | None]) -> Built:
    dist, seconds = linux_dist
    tarballs = sorted(dist.glob(f"domi-desktop-{__version__}-linux-*.tar.gz"))
    assert (dist / "domi-desktop/domi-desktop").is_file(), f"no bundle in {dist}"
    assert len(tarballs) == 1, f"expected one tarball in {dist}, found {tarballs}"
    return Built(dist / "domi-desktop", tarballs[0], seconds)


def empty_env(**extra: str) -> dict[str, str]:
    """``env -i`` plus ``extra``."""
    return dict(extra)


def run(exe: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(exe), *args], env=env, capture_output=True, text=True, timeout=60, check=False
    )


def is_elf(path: Path) -> bool:
    with path.open("rb") as file:
        return file.read(4) == b"\x7fELF"


def bundle_bytes(path: Path) -> int:
    """Bytes of the files under ``path``, symbolic links not followed (as they are on disk)."""
    return sum(f.lstat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


# --- it runs ----------------------------------------------------------------------------------


def test_the_bundle_prints_its_version_in_an_empty_environment(built: Built) -> None:
    done = run(built.exe, "--version", env=empty_env())
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"domi-desktop {__version__}"


def test_preview_resolves_asia_shanghai_from_the_bundled_tzdata_alone(
    built: Built, tmp_path: Path
) -> None:
    # PYTHONTZPATH names one empty folder: zoneinfo searches it instead of the OS database, finds
    # nothing there, and falls back to the tzdata package, which only the bundle can provide.
    nowhere = tmp_path / "no-zoneinfo"
    nowhere.mkdir()
    env = empty_env(PYTHONTZPATH=str(nowhere))
    done = run(built.exe, *smoke.PREVIEW, env=env)
    assert done.returncode == 0, done.stderr
    assert '"next": ["2024-03-11T09:00:00+08:00", "2024-03-12T09:00:00+08:00"]' in done.stdout
    # available_timezones() reads tzdata's own list: the suggestion comes from it.
    wrong_case = run(built.exe, "preview", "0 9 * * *", "--tz", "asia/shanghai", env=env)
    assert wrong_case.returncode == 2
    assert "did you mean 'Asia/Shanghai'?" in wrong_case.stderr
    assert (built.internal / "tzdata/zoneinfo/Asia/Shanghai").is_file()


def test_headless_starts_and_stops_cleanly_on_sigterm(
    built: Built, tmp_path: Path, figures: list[str]
) -> None:
    (tmp_path / "home").mkdir()
    env = empty_env(HOME=str(tmp_path / "home"))
    timings = smoke.check_headless(built.exe, env, tmp_path / "data", stop="signal")
    figures.append(
        f"--headless: first wake after {timings['first_wake_s']:.2f} s, "
        f"stopped {timings['stop_s']:.2f} s after SIGTERM",
    )
    log = (tmp_path / "data/headless.stderr").read_text()
    assert "signal 15: stopping" in log
    assert (tmp_path / "data/domi-desktop.log").is_file()


def test_the_smoke_test_every_os_runs_passes_on_the_bundle(
    built: Built, figures: list[str]
) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "packaging/smoke_test.py"), str(built.exe)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "smoke_test: all checks passed" in done.stdout
    figures.append("smoke_test.py: " + " | ".join(done.stdout.splitlines()[1:-1]))


def test_the_tray_app_starts_on_x11_with_the_svg_icon_engine_and_quits(
    built: Built, tmp_path: Path
) -> None:
    for tool in ("dbus-run-session", "xvfb-run"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed (make system-deps)")
    script = tmp_path / "tray.sh"
    script.write_text(
        'set -u\nexe=$1\n"$exe" 2>"$DOMI_DATA_DIR/../tray.stderr" &\n'
        'for _ in $(seq 100); do "$exe" status >/dev/null 2>&1 && break; sleep 0.1; done\n'
        '"$exe" status\n"$exe" quit\nwait $!\necho "tray exit $?"\n'
    )
    data = tmp_path / "data"
    data.mkdir()
    env = empty_env(
        PATH="/usr/bin:/bin",
        HOME=str(tmp_path),
        DOMI_DATA_DIR=str(data),
        QT_QPA_PLATFORM="xcb",
        QT_DEBUG_PLUGINS="1",
    )
    done = subprocess.run(
        ["dbus-run-session", "--", "xvfb-run", "-a", "bash", str(script), str(built.exe)],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    stderr = (tmp_path / "tray.stderr").read_text()
    assert f"domi-desktop {__version__} running" in done.stdout, done.stdout + stderr
    assert "tray exit 0" in done.stdout, done.stdout + stderr
    assert re.search(r"platforms/libqxcb\.so\" loaded library", stderr), stderr
    assert re.search(r"iconengines/libqsvgicon\.so\" loaded library", stderr), stderr
    assert "Traceback" not in stderr


# --- keyring ----------------------------------------------------------------------------------


def test_the_keyring_backends_and_their_entry_points_are_in_the_bundle(built: Built) -> None:
    from PyInstaller.archive.readers import CArchiveReader

    modules = set(CArchiveReader(str(built.exe)).open_embedded_archive("PYZ.pyz").toc)
    for backend in ("SecretService", "libsecret", "kwallet", "chainer", "fail"):
        assert f"keyring.backends.{backend}" in modules
    assert {"secretstorage", "jeepney", "domi_desktop.secrets.keyring_store"} <= modules
    entry_points = next(built.internal.glob("keyring-*.dist-info/entry_points.txt")).read_text()
    assert "SecretService = keyring.backends.SecretService" in entry_points


def test_secret_list_without_a_session_bus_says_there_is_no_os_keyring(
    built: Built, tmp_path: Path
) -> None:
    done = run(built.exe, "secret", "list", env=empty_env(HOME=str(tmp_path)))
    assert done.returncode == 2
    assert done.stderr.startswith("domi-desktop: no OS keyring is available")
    assert "Traceback" not in done.stderr


def test_the_bundle_stores_and_lists_a_secret_in_a_real_gnome_keyring(
    built: Built, tmp_path: Path
) -> None:
    for tool in ("dbus-run-session", "gnome-keyring-daemon"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed (make system-deps)")
    script = tmp_path / "keyring.sh"
    script.write_text(
        """set -euo pipefail
exe=$1 work=$2
mkdir -m 700 "$work/control"
printf 'throw-away' | XDG_DATA_HOME="$work/keyrings" gnome-keyring-daemon --foreground --unlock \
  --components=secrets --control-directory="$work/control" >"$work/gk.out" 2>"$work/gk.err" &
daemon=$!
trap 'kill $daemon' EXIT
for _ in $(seq 100); do
  dbus-send --session --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.NameHasOwner \
    string:org.freedesktop.secrets 2>/dev/null | grep -q 'boolean true' && break
  sleep 0.1
done
printf 'hunter2' | "$exe" secret set api-token
"$exe" secret list
"""
    )
    env = empty_env(PATH="/usr/bin:/bin", HOME=str(tmp_path))
    done = subprocess.run(
        ["dbus-run-session", "--", "bash", str(script), str(built.exe), str(tmp_path)],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == ["stored secret api-token in the OS keyring", "api-token"]


# --- what is in it ----------------------------------------------------------------------------


def test_the_bundle_is_at_most_120_mb_and_each_download_at_most_60_mb(
    built: Built, figures: list[str]
) -> None:
    size = bundle_bytes(built.bundle)
    downloads = [built.tarball, *built.tarball.parent.glob("*.deb")]
    figures.append(
        f"bundle {size / 1e6:.1f} MB unpacked; "
        + ", ".join(f"{path.name} {path.stat().st_size / 1e6:.1f} MB" for path in downloads)
    )
    assert size <= MAX_BUNDLE_BYTES
    for path in downloads:
        assert path.stat().st_size <= MAX_DOWNLOAD_BYTES, path.name


def test_the_bundle_has_the_icons_and_only_the_qt_parts_the_app_uses(built: Built) -> None:
    internal = built.internal
    svgs = {path.name for path in (internal / "resources").glob("*.svg")}
    assert svgs == {path.name for path in (ROOT / "resources").glob("*.svg")}
    plugins = internal / "PySide6/Qt/plugins"
    for plugin in (
        "platforms/libqxcb.so",
        "platforms/libqwayland.so",
        "platforms/libqoffscreen.so",
        "imageformats/libqsvg.so",
        "iconengines/libqsvgicon.so",
        "platformthemes/libqxdgdesktopportal.so",
        "wayland-shell-integration/libxdg-shell.so",
    ):
        assert (plugins / plugin).is_file(), plugin
    names = {path.name for path in internal.rglob("*")}
    for library in ("libQt6Core.so.6", "libQt6DBus.so.6", "libQt6Svg.so.6", "libQt6Network.so.6"):
        assert library in names
    unwanted = re.compile(r"Qt6?(Qml|Quick|WebEngine|Pdf|Multimedia|OpenGL|Designer)|libgtk-3|tls")
    assert sorted(name for name in names if unwanted.search(name)) == []
    assert not (plugins / "tls").exists()
    # Qt's own strings in the app's languages only: zh loads qtbase_zh_CN.qm (ui/i18n.py).
    assert sorted(path.name for path in internal.rglob("*.qm")) == ["qtbase_zh_CN.qm"]


# glibc, and the graphics libraries that must come from the running system (its GPU driver):
# PyInstaller leaves these out on purpose. GLib and libdbus the spec leaves to the desktop
# (packaging/linux/system_libs.py); what they link comes with them from the system.
SYSTEM_LIBRARIES = re.compile(
    r"^(ld-linux.*|lib(c|m|dl|rt|pthread|resolv|util)\.so\..*|libxcb\.so\.1"
    r"|lib(GL|GLX|GLdispatch|EGL|OpenGL|gbm|drm)\.so\..*|libwayland-(client|cursor|egl)\.so\..*"
    r"|lib(glib|gio|gobject|gmodule|gthread)-2\.0\.so\.0|libdbus-1\.so\.3)$"
)


def direct_links(elf: Path) -> list[str]:
    listing = subprocess.run(
        ["readelf", "--dynamic", "--wide", str(elf)],
        capture_output=True, text=True, check=True, env={"LC_ALL": "C"},
    ).stdout  # fmt: skip
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", listing)


def test_every_library_in_the_bundle_finds_what_it_links_inside_the_bundle(built: Built) -> None:
    elves = [
        path
        for path in built.bundle.rglob("*")
        if path.is_file() and not path.is_symlink() and is_elf(path)
    ]
    env = empty_env(LD_LIBRARY_PATH=str(built.internal))
    problems: list[str] = []
    for elf in elves:
        listing = subprocess.run(
            ["ldd", str(elf)], env=env, capture_output=True, text=True, check=False
        ).stdout
        found = dict(re.findall(r"^\s*(\S+) => (.+?)(?: \(0x[0-9a-f]+\))?$", listing, re.M))
        # What the file links itself: what a system library links is the system's business.
        for name in direct_links(elf):
            target = found.get(name, "not found")
            if not target.startswith(str(built.bundle)) and not SYSTEM_LIBRARIES.match(name):
                problems.append(f"{elf.relative_to(built.bundle)}: {name} => {target}")
    assert problems == []


def test_glib_and_libdbus_come_from_the_system_with_what_only_they_link(built: Built) -> None:
    names = {path.name for path in built.internal.rglob("*.so*")}
    assert not names & {"libglib-2.0.so.0", "libgio-2.0.so.0", "libdbus-1.so.3"}
    assert not names & {"libsystemd.so.0", "libgcrypt.so.20", "libmount.so.1", "libpcre2-8.so.0"}


# --- the tarball ------------------------------------------------------------------------------


@pytest.fixture
def unpacked(built: Built, tmp_path: Path) -> Iterator[Path]:
    subprocess.run(["tar", "-xzf", str(built.tarball), "-C", str(tmp_path)], check=True)
    (folder,) = tmp_path.glob("domi-desktop-*")
    yield folder


def test_the_tarball_holds_the_bundle_the_desktop_file_the_icons_and_the_scripts(
    unpacked: Path,
) -> None:
    for name in ("domi-desktop/domi-desktop", "install.sh", "uninstall.sh"):
        assert os.access(unpacked / name, os.X_OK), name
    desktop = (unpacked / "domi-desktop.desktop").read_text()
    assert "Icon=domi-desktop" in desktop
    assert "X-GNOME-Autostart-Delay=5" in desktop
    assert (unpacked / "icons/hicolor/scalable/apps/domi-desktop.svg").is_file()
    assert (unpacked / "icons/hicolor/48x48/apps/domi-desktop.png").is_file()
    assert (unpacked / "VERSION").read_text().strip() == __version__


def test_install_sh_installs_for_the_current_user_and_uninstall_sh_removes_it(
    unpacked: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = empty_env(HOME=str(home), PATH="/usr/bin:/bin")
    done = subprocess.run(
        ["bash", str(unpacked / "install.sh"), "--autostart"],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    app = home / ".local/opt/domi-desktop"
    link = home / ".local/bin/domi-desktop"
    applications = home / ".local/share/applications/domi-desktop.desktop"
    autostart = home / ".config/autostart/domi-desktop.desktop"
    icons = home / ".local/share/icons/hicolor"
    assert link.is_symlink() and link.resolve() == (app / "domi-desktop").resolve()
    assert run(link, "--version", env=empty_env()).stdout.strip() == f"domi-desktop {__version__}"
    entry = applications.read_text()
    assert f"Exec={app}/domi-desktop\n" in entry
    assert "X-Domi-Desktop=1" in autostart.read_text()  # the app's own switch sees it as its own
    assert (icons / "256x256/apps/domi-desktop.png").is_file()
    assert (icons / "scalable/apps/domi-desktop.svg").is_file()
    if shutil.which("desktop-file-validate"):
        for path in (applications, autostart):
            check = subprocess.run(["desktop-file-validate", str(path)], capture_output=True)
            assert check.returncode == 0, check.stdout

    again = subprocess.run(["bash", str(unpacked / "install.sh")], env=env, capture_output=True)
    assert again.returncode == 0, again.stderr
    assert sorted(p.name for p in (home / ".local/opt").iterdir()) == ["domi-desktop"]

    # Uninstalling stops the running app (cleanly: exit 0), then removes every file it installed.
    data = tmp_path / "data"
    daemon = subprocess.Popen(
        [str(link), "--headless"], env=empty_env(HOME=str(home), DOMI_DATA_DIR=str(data)),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        wait_until_running(link, home, data)
        removed = subprocess.run(
            [str(app / "uninstall.sh")],
            env={**env, "DOMI_DATA_DIR": str(data)}, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert removed.returncode == 0, removed.stderr
        assert daemon.wait(timeout=20) == 0
    finally:
        if daemon.poll() is None:
            daemon.send_signal(signal.SIGKILL)
            daemon.wait()
    assert f"kept your schedules and history in {data}" in removed.stdout
    for gone in (app, link, applications, autostart):
        assert not gone.exists() and not gone.is_symlink(), gone
    assert list(icons.rglob("domi-desktop.*")) == []
    assert data.is_dir()


def wait_until_running(link: Path, home: Path, data: Path) -> None:
    env = empty_env(HOME=str(home), DOMI_DATA_DIR=str(data))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if run(link, "status", env=env).returncode == 0:
            return
        time.sleep(0.1)
    raise AssertionError("the headless app did not start")


def test_install_sh_refuses_to_replace_a_domi_desktop_command_it_did_not_install(
    unpacked: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    (home / ".local/bin").mkdir(parents=True)
    pip_script = home / ".local/bin/domi-desktop"
    pip_script.write_text("#!/usr/bin/env python3\n")
    done = subprocess.run(
        ["bash", str(unpacked / "install.sh")],
        env=empty_env(HOME=str(home), PATH="/usr/bin:/bin"), capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 1
    assert "is not our link (a pip install?)" in done.stderr
    assert pip_script.read_text() == "#!/usr/bin/env python3\n"
    assert not (home / ".local/opt/domi-desktop").exists()
