#!/usr/bin/env python3
"""The Windows release built here under Wine: the bundle, the setup, its signature.

    python packaging/wine/release.py build     # .wine-kit/release/ (cached; rebuilt on change)

- The PyInstaller bundle is built by the kit's Windows CPython under Wine. PyInstaller cannot read
  the embeddable CPython's zipped standard library (``FileNotFoundError ... python311.zip\\...``),
  so the release's copy of it has that zip unpacked into ``Lib``.
- The setup is compiled by the real Inno Setup compiler from the npm package ``innosetup``
  (``ISCC.exe`` is 32-bit: Wine needs the i386 architecture and Debian's ``wine32``).
- It is signed by Debian's ``osslsigncode`` with a certificate made for this build alone, and the
  signature verified against that certificate.

What it makes, in ``.wine-kit/release/``: ``dist/domi-desktop/`` (the bundle), ``setup.exe`` (signed),
``signing-cert.pem`` and ``sizes.json`` (bytes of the bundle unpacked, of the setup and of a zip of
the bundle). tests/windows/test_installed_app.py installs and removes that setup in the Windows
stage's fresh prefix (``kit.py test`` hands it over when it is built).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Iterable
from pathlib import Path

import kit

RELEASE = kit.KIT / "release"
INNOSETUP = "innosetup@6.4.1"
# Debian packages, each with the command that stands for it (None: the package itself is looked
# for): a machine may have npm from elsewhere (Node's own packages), which Debian's npm conflicts with.
DEB_PACKAGES = {
    "wine32:i386": None,
    "osslsigncode": "osslsigncode",
    "npm": "npm",
    "openssl": "openssl",
}
BUILD_TIMEOUT = 60 * 60
ISCC_TIMEOUT = 20 * 60

# What the release is made of: a change to any of these files (or to the kit) rebuilds it.
INPUT_FOLDERS = ("domi_desktop", "resources", "packaging/rthooks")
INPUT_FILES = (
    "pyproject.toml",
    "packaging/domi-desktop.spec",
    "packaging/launcher.py",
    "packaging/make_icons.py",
    "packaging/windows/domi-desktop.iss",
    "packaging/wine/release.py",
)


def log(message: str) -> None:
    print(f"[wine-release] {message}", flush=True)


def windows_path(path: Path) -> str:
    """Wine's Z: drive is the Unix root."""
    return "Z:" + str(path.resolve()).replace("/", "\\")


def version() -> str:
    text = (kit.REPO / "domi_desktop/__init__.py").read_text(encoding="utf-8")
    match = re.search(r'^__version__ = "([^"]+)"$', text, re.M)
    if match is None:
        raise SystemExit("no __version__ in domi_desktop/__init__.py")
    return match.group(1)


def pyinstaller_version() -> str:
    text = (kit.REPO / "Makefile").read_text(encoding="utf-8")
    match = re.search(r"^PYINSTALLER_VERSION := (\S+)$", text, re.M)
    if match is None:
        raise SystemExit("no PYINSTALLER_VERSION in the Makefile")
    return match.group(1)


def inputs_digest() -> str:
    # The Makefile by PyInstaller's pinned version alone: any other edit there changes nothing here.
    digest = hashlib.sha256(f"{kit.inputs_digest()}\0pyinstaller=={pyinstaller_version()}".encode())
    paths = [kit.REPO / name for name in INPUT_FILES]
    for folder in INPUT_FOLDERS:
        paths += sorted(
            path
            for path in (kit.REPO / folder).rglob("*")
            if path.is_file() and "__pycache__" not in path.parts
        )
    for path in paths:
        digest.update(str(path.relative_to(kit.REPO)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _installed(package: str) -> bool:
    status = subprocess.run(
        ["dpkg-query", "-W", "-f=${Status}", package], capture_output=True, text=True, check=False
    ).stdout
    return "install ok installed" in status


def install_debian_packages() -> None:
    foreign = subprocess.run(
        ["dpkg", "--print-foreign-architectures"], capture_output=True, text=True, check=True
    ).stdout.split()
    missing = [
        name
        for name, command in DEB_PACKAGES.items()
        if (shutil.which(command) is None if command else not _installed(name))
    ]
    if not missing and "i386" in foreign:
        return
    if os.geteuid() != 0:
        raise SystemExit(
            f"the Windows release needs the i386 architecture and {' '.join(missing)}"
            " (as root: dpkg --add-architecture i386; apt-get install them)"
        )
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    if "i386" not in foreign:
        log("adding the i386 architecture (ISCC.exe and the setup it writes are 32-bit)")
        kit.run(["dpkg", "--add-architecture", "i386"])
    log(f"installing Debian packages: {' '.join(missing)}")
    kit.run(["apt-get", "update", "-qq"], env=env)
    kit.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing], env=env)


def build_python(work: Path) -> Path:
    """The kit's CPython with its standard library unpacked, PyInstaller beside the kit's wheels."""
    python = work / "python"
    shutil.copytree(kit.KIT / "python", python)
    with zipfile.ZipFile(python / "python311.zip") as archive:
        archive.extractall(python / "Lib")
    (python / "python311.zip").unlink()
    tools = work / "tools"
    env = {**os.environ, "UV_CACHE_DIR": str(kit.KIT / "cache")}
    kit.run(
        [kit.KIT / "tools/bin/uv", "pip", "install", "--quiet", "--native-tls",
         "--python-platform", kit.WINDOWS_TARGET, "--python-version", "3.11",
         "--only-binary", ":all:", "--target", tools, f"pyinstaller=={pyinstaller_version()}"],
        env=env,
    )  # fmt: skip
    site = os.path.relpath(kit.KIT / "site", python).replace("/", "\\")
    (python / "python311._pth").write_text(
        f"Lib\n.\n{site}\n..\\tools\nimport site\n", newline="\r\n"
    )
    return python


def install_innosetup(work: Path) -> Path:
    npm = work / "npm"
    kit.run(["npm", "install", "--no-audit", "--no-fund", "--silent", "--prefix", npm, INNOSETUP])
    return npm / "node_modules/innosetup/bin/ISCC.exe"


def wine_run(prefix: kit.Prefix, argv: Iterable[str | Path], timeout: float, what: str) -> None:
    """A Windows program with its output piped through (a plain file breaks Windows CPython)."""
    started = time.monotonic()
    process = subprocess.Popen(
        [str(a) for a in argv],
        env=prefix.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    assert process.stdout is not None
    for line in process.stdout:
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()
    code = process.wait(timeout=timeout)
    if code != 0:
        raise SystemExit(f"{what} failed with exit code {code}")
    log(f"{what}: {time.monotonic() - started:.0f} s")


def sign(setup: Path, work: Path) -> Path:
    """Sign ``setup`` with a certificate made now, verify the signature, return the certificate."""
    key, cert = work / "signing-key.pem", work / "signing-cert.pem"
    kit.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:3072", "-nodes", "-days", "30",
         "-keyout", key, "-out", cert, "-subj", "/CN=domi-desktop throw-away test signing",
         "-addext", "extendedKeyUsage=codeSigning"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    signed = setup.with_name("signed-" + setup.name)
    kit.run(
        ["osslsigncode", "sign", "-certs", cert, "-key", key, "-h", "sha256",
         "-n", "domi-desktop setup", "-in", setup, "-out", signed],
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    verified = subprocess.run(
        ["osslsigncode", "verify", "-CAfile", cert, "-in", signed],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if verified.returncode != 0 or "Signature verification: ok" not in verified.stdout:
        raise SystemExit(f"the setup's signature does not verify:\n{verified.stdout}")
    signed.replace(setup)
    key.unlink()
    return cert


def folder_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def zipped_bytes(folder: Path, work: Path) -> int:
    archive = shutil.make_archive(str(work / "bundle"), "zip", folder.parent, folder.name)
    size = Path(archive).stat().st_size
    Path(archive).unlink()
    return size


def build(force: bool = False) -> None:
    install_debian_packages()
    stamp = RELEASE / ".stamp"
    digest = inputs_digest()
    if not force and stamp.is_file() and stamp.read_text() == digest:
        log(f"up to date: {RELEASE}")
        return
    started = time.monotonic()
    shutil.rmtree(RELEASE, ignore_errors=True)
    work = Path(tempfile.mkdtemp(prefix="build-", dir=kit.KIT))
    try:
        python = build_python(work)
        iscc = install_innosetup(work)
        icons = work / "icons"
        kit.run([sys.executable, kit.REPO / "packaging/make_icons.py", "--out", icons])
        dist = work / "dist"
        with kit.fresh_prefix() as prefix:
            prefix.env["DOMI_ICON_DIR"] = windows_path(icons)
            wine_run(
                prefix,
                [kit.WINE, python / "python.exe", "-m", "PyInstaller", "--noconfirm",
                 "--log-level", "WARN", "--distpath", windows_path(dist),
                 "--workpath", windows_path(work / "pyinstaller"),
                 windows_path(kit.REPO / "packaging/domi-desktop.spec")],
                BUILD_TIMEOUT, "PyInstaller under Wine",
            )  # fmt: skip
            for exe in ("domi-desktop.exe", "domi-desktop-cli.exe"):
                if not (dist / "domi-desktop" / exe).is_file():
                    raise SystemExit(f"the bundle has no {exe}")
            # The 32-bit ISCC.exe goes through the `wine` wrapper (wine32, WoW64 in this prefix).
            wine_run(
                prefix,
                ["wine", iscc, "/Q", f"/DAppVersion={version()}",
                 f"/DSourceDir={windows_path(dist / 'domi-desktop')}",
                 f"/DOutputDir={windows_path(work)}", "/DOutputName=setup",
                 f"/DIconFile={windows_path(icons / 'domi-desktop.ico')}",
                 windows_path(kit.REPO / "packaging/windows/domi-desktop.iss")],
                ISCC_TIMEOUT, "ISCC.exe under Wine",
            )  # fmt: skip
        cert = sign(work / "setup.exe", work)
        RELEASE.mkdir(parents=True)
        shutil.move(dist, RELEASE / "dist")
        shutil.move(work / "setup.exe", RELEASE / "setup.exe")
        shutil.move(cert, RELEASE / "signing-cert.pem")
        bundle = RELEASE / "dist/domi-desktop"
        sizes = {
            "bundle_unpacked": folder_bytes(bundle),
            "bundle_zip": zipped_bytes(bundle, work),
            "setup": (RELEASE / "setup.exe").stat().st_size,
        }
        (RELEASE / "sizes.json").write_text(json.dumps(sizes, indent=1) + "\n")
        stamp.write_text(digest)
        mib = {name: f"{size / 2**20:.1f} MiB" for name, size in sizes.items()}
        log(f"built in {time.monotonic() - started:.0f} s: {RELEASE} {mib}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str]) -> int:
    if argv[:1] != ["build"] or len(argv) > 2 or argv[1:] not in ([], ["--force"]):
        print(__doc__.splitlines()[2].strip(), file=sys.stderr)
        return 2
    if not os.environ.get("DISPLAY"):
        # A wineserver creates windows (PyInstaller's, the compiler's) only with a display.
        os.execvp(
            "xvfb-run",
            ["xvfb-run", "-a", "-s", "-screen 0 1280x800x24", sys.executable, __file__, *argv],
        )
    # A stopped build still removes its prefix and its work folder (the finally clauses).
    signal.signal(signal.SIGTERM, lambda _signal, _frame: sys.exit(143))
    with kit.kit_lock() as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the kit is not rebuilt under a release build
        kit.build()
        build(force="--force" in argv)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
