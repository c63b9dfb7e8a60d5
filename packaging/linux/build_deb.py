"""Build the Debian package of domi-desktop from the PyInstaller bundle.

    python packaging/linux/build_deb.py --bundle dist/domi-desktop --icons build/icons/png \\
        --out dist [--revision 1]

Writes ``OUT/domi-desktop_<version>-<revision>_<arch>.deb`` and prints its path. What it holds:

- ``/usr/lib/domi-desktop/``: the onedir bundle as built and smoke-tested (the same files as the
  tarball's), and ``/usr/bin/domi-desktop``, a link to its executable;
- ``/usr/share/applications/domi-desktop.desktop``: the menu entry (``Exec=domi-desktop``);
- ``/usr/share/icons/hicolor/*/apps/domi-desktop.{png,svg}``: the icon (Debian's icon-theme and
  desktop-file triggers refresh the caches: no maintainer scripts);
- ``/usr/share/doc/domi-desktop/{copyright,changelog.Debian.gz}``.

From the bundle, not the wheel: the wheel would need Debian's python3-pyside6 (Debian 12 has
none: PySide6 is not packaged for bookworm) or a venv made at install time, which fetches from PyPI
in a maintainer script. The bundle is the artifact the tests already run, and it needs only the
libraries PyInstaller deliberately leaves to the system (glibc, libGL/EGL, libxcb, libwayland):
``Depends`` is computed from what the bundle's ELF files load from outside it (``ldd``, then
``dpkg -S`` on the build machine), with glibc's version from the highest ``GLIBC_x.y`` symbol
version they need.

Start at login: the .deb installs no ``/etc/xdg/autostart`` entry. It would start the app for every
user, and the app's own switch (Settings > Start at login) could not turn it off: it writes and
removes ``~/.config/autostart/domi-desktop.desktop``, and a system entry shows through once that is
removed. So the login entry stays the one the app manages per user, and it points at
``/usr/lib/domi-desktop/domi-desktop``, a path that upgrades keep. ``purge`` leaves the users' home
folders alone (Debian policy 10.7.3): the data dir, the keyring items, a login entry.
"""

from __future__ import annotations

import argparse
import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile
from email.utils import formatdate
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "domi-desktop"
MAINTAINER = "domi-desktop maintainers <maintainers@domi-desktop.invalid>"
HOMEPAGE = "https://github.com/domi-desktop/domi-desktop"
PREFIX = f"usr/lib/{PACKAGE}"
ICON_SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)
SUMMARY = "tray app that runs recurring jobs on cron schedules"
DESCRIPTION = """\
 domi-desktop runs your recurring jobs (commands, HTTP calls) on cron
 schedules from the system tray, and is honest about what happened while
 the laptop slept: a job due during a sleep runs once at the resume,
 marked late, and older missed runs are recorded as skipped.
 .
 This package ships the self-contained build (its own Python and Qt).
"""


# Libraries the bundle copied from this very Debian release that lintian knows as Debian's own
# (its embedded-library error): the .deb leaves them out and depends on Debian's packages, which
# the bootloader's search path then finds in /lib. Each: bundle file name -> Debian package.
FROM_DEBIAN = {
    "libbz2.so.1.0": "libbz2-1.0",
    "libexpat.so.1": "libexpat1",
    "libfreetype.so.6": "libfreetype6",
    "libpng16.so.16": "libpng16-16",
    "libz.so.1": "zlib1g",
}

# Lintian's findings that a self-contained bundle has by design; each with its reason, shipped as
# the package's override file (lintian then reports them as overridden, never as errors).
LINTIAN_OVERRIDES = """\
# The bundle's libraries find each other through RPATH $ORIGIN (PySide6's wheels are built so).
custom-library-search-path *
# Python's expat module: Debian's CPython links the pyexpat module with its own expat copy.
embedded-library expat [usr/lib/domi-desktop/_internal/python3.11/lib-dynload/*]
# Python extension modules that call nothing of libc themselves, and ICU's data-only library.
library-not-linked-against-libc *
shared-library-lacks-prerequisites *
# libmount and libblkid name sensible-pager in their help texts; the app never runs them.
missing-depends-on-sensible-utils *
# PyInstaller's bootloader is linked as it is built upstream.
hardening-no-pie *
"""


def version() -> str:
    text = (ROOT / "domi_desktop/__init__.py").read_text(encoding="utf-8")
    match = re.search(r'^__version__ = "([^"]+)"', text, re.M)
    if match is None:
        raise SystemExit("no __version__ in domi_desktop/__init__.py")
    return match.group(1)


def is_elf(path: Path) -> bool:
    with path.open("rb") as file:
        return file.read(4) == b"\x7fELF"


def elf_files(tree: Path) -> list[Path]:
    return sorted(p for p in tree.rglob("*") if p.is_file() and not p.is_symlink() and is_elf(p))


def outside_libraries(bundle: Path) -> set[Path]:
    """The libraries the bundle's ELF files load from outside the bundle, as ``ldd`` resolves them
    when the bundle's own folders come first (as the bootloader arranges at run time)."""
    folders = sorted({str(p.parent) for p in bundle.rglob("*.so*")})
    env = {"PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": ":".join(folders)}
    found: set[Path] = set()
    for elf in elf_files(bundle):
        listing = subprocess.run(
            ["ldd", str(elf)], env=env, capture_output=True, text=True, check=False
        ).stdout
        for target in re.findall(r"=> (/\S+)", listing):
            path = Path(target).resolve()
            if not path.is_relative_to(bundle.resolve()):
                found.add(path)
    return found


def owning_packages(libraries: set[Path]) -> set[str]:
    """``dpkg -S`` for each library; ``usrmerge`` spells /lib as /usr/lib, so both are tried."""
    packages: set[str] = set()
    for library in sorted(libraries):
        candidates = [str(library)]
        text = str(library)
        if text.startswith("/usr/lib/"):
            candidates.append(text.removeprefix("/usr"))
        for candidate in candidates:
            done = subprocess.run(
                ["dpkg", "-S", candidate], capture_output=True, text=True, check=False
            )
            if done.returncode == 0:
                package = done.stdout.split(":", 1)[0].strip()
                packages.add(package)
                break
        else:
            raise SystemExit(f"build_deb: no Debian package owns {library}, which the bundle loads")
    return packages


def glibc_version(bundle: Path) -> str:
    """The highest ``GLIBC_x.y`` symbol version any ELF file of the bundle needs."""
    best = (2, 17)
    for elf in elf_files(bundle):
        text = subprocess.run(
            ["readelf", "--version-info", "--wide", str(elf)],
            capture_output=True, text=True, check=False,
        ).stdout  # fmt: skip
        for major, minor in re.findall(r"Name: GLIBC_(\d+)\.(\d+)", text):
            best = max(best, (int(major), int(minor)))
    return f"{best[0]}.{best[1]}"


def depends(bundle: Path) -> str:
    packages = owning_packages(outside_libraries(bundle)) | set(FROM_DEBIAN.values())
    # The architecture's qualifier (libc6:amd64) is dpkg -S's; Depends names the package only.
    names = sorted({name.split(":")[0] for name in packages})
    return ", ".join(
        f"{name} (>= {glibc_version(bundle)})" if name == "libc6" else name for name in names
    )


def architecture() -> str:
    return subprocess.run(
        ["dpkg", "--print-architecture"], capture_output=True, text=True, check=True
    ).stdout.strip()


def installed_size_kib(tree: Path) -> int:
    return sum(
        (p.lstat().st_size + 1023) // 1024 for p in tree.rglob("*") if p.is_file() or p.is_symlink()
    )


def copyright_text() -> str:
    return f"""Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: {PACKAGE}
Source: {HOMEPAGE}

Files: *
Copyright: the domi-desktop authors
License: MIT
 Permission is hereby granted, free of charge, to any person obtaining a copy
 of this software and associated documentation files (the "Software"), to deal
 in the Software without restriction, including without limitation the rights
 to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
 copies of the Software, and to permit persons to whom the Software is
 furnished to do so, subject to the following conditions:
 .
 The above copyright notice and this permission notice shall be included in
 all copies or substantial portions of the Software.
 .
 THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
 IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
 FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
 AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
 LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
 OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN
 THE SOFTWARE.
Comment:
 /usr/lib/{PACKAGE} also holds the Python interpreter, Qt 6 (LGPL-3),
 PySide6 (LGPL-3) and the other libraries the app runs with, each under its
 own license; their license files are next to them in that folder.
"""


def changelog(full_version: str, when: float) -> bytes:
    text = (
        f"{PACKAGE} ({full_version}) unstable; urgency=medium\n\n"
        f"  * Release {full_version}, built from the PyInstaller bundle.\n\n"
        f" -- {MAINTAINER}  {formatdate(when)}\n"
    )
    # mtime=0: the same input gives the same bytes (gzip would stamp the build time).
    return gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)


def stage(bundle: Path, icons: Path, tree: Path, full_version: str, when: float) -> None:
    lib = tree / PREFIX
    shutil.copytree(bundle, lib, symlinks=True)
    for name in FROM_DEBIAN:
        (lib / "_internal" / name).unlink()
    (tree / "usr/bin").mkdir(parents=True)
    os.symlink(f"../lib/{PACKAGE}/{PACKAGE}", tree / f"usr/bin/{PACKAGE}")
    share = tree / "usr/share"
    (share / "applications").mkdir(parents=True)
    shutil.copy(ROOT / "packaging/linux/domi-desktop.desktop", share / "applications")
    hicolor = share / "icons/hicolor"
    (hicolor / "scalable/apps").mkdir(parents=True)
    shutil.copy(ROOT / "resources/domi-desktop.svg", hicolor / "scalable/apps")
    for size in ICON_SIZES:
        folder = hicolor / f"{size}x{size}/apps"
        folder.mkdir(parents=True)
        shutil.copy(icons / f"domi-desktop-{size}.png", folder / "domi-desktop.png")
    doc = share / f"doc/{PACKAGE}"
    doc.mkdir(parents=True)
    (doc / "copyright").write_text(copyright_text(), encoding="utf-8")
    (doc / "changelog.Debian.gz").write_bytes(changelog(full_version, when))
    overrides = share / "lintian/overrides"
    overrides.mkdir(parents=True)
    (overrides / PACKAGE).write_text(LINTIAN_OVERRIDES, encoding="utf-8")
    # dpkg keeps the modes as staged: folders and the one program 0755, the rest (shared libraries
    # too: lintian's shared-library-is-executable) 0644, whatever the umask or PyInstaller's copy.
    program = lib / PACKAGE
    for path in tree.rglob("*"):
        if not path.is_symlink():
            path.chmod(0o755 if path.is_dir() or path == program else 0o644)


def control(tree: Path, bundle: Path, full_version: str) -> str:
    return (
        f"Package: {PACKAGE}\n"
        f"Version: {full_version}\n"
        f"Architecture: {architecture()}\n"
        f"Maintainer: {MAINTAINER}\n"
        f"Installed-Size: {installed_size_kib(tree)}\n"
        f"Depends: {depends(bundle)}\n"
        # The OS keyring for the jobs' secrets (Secret Service); without one the app says so.
        "Recommends: gnome-keyring | kwalletmanager | keepassxc\n"
        "Section: utils\n"
        "Priority: optional\n"
        f"Homepage: {HOMEPAGE}\n"
        f"Description: {SUMMARY}\n{DESCRIPTION}"
    )


def build(bundle: Path, icons: Path, out: Path, revision: str) -> Path:
    full_version = f"{version()}-{revision}"
    # One timestamp for every file: the last commit's, else SOURCE_DATE_EPOCH, else now.
    when = float(os.environ.get("SOURCE_DATE_EPOCH") or _commit_time() or 0) or None
    with tempfile.TemporaryDirectory(prefix="domi-deb-") as temp:
        tree = Path(temp) / "root"
        stage(bundle, icons, tree, full_version, when or 0)
        (tree / "DEBIAN").mkdir()
        (tree / "DEBIAN/control").write_text(control(tree, bundle, full_version), encoding="utf-8")
        out.mkdir(parents=True, exist_ok=True)
        deb = out / f"{PACKAGE}_{full_version}_{architecture()}.deb"
        env = {**os.environ}
        if when:
            env["SOURCE_DATE_EPOCH"] = str(int(when))
        # xz: the smallest download (39 MB against gzip's 50), but 1.5-3 min of this 2-core
        # machine; DOMI_DEB_COMPRESSION=gzip for the tests. --root-owner-group: root:root files.
        compression = os.environ.get("DOMI_DEB_COMPRESSION", "xz")
        subprocess.run(
            ["dpkg-deb", "--root-owner-group", f"-Z{compression}", "--build", str(tree), str(deb)],
            env=env, check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
    return deb


def _commit_time() -> str | None:
    done = subprocess.run(
        ["git", "-C", str(ROOT), "log", "-1", "--format=%ct"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", type=Path, required=True, help="the onedir bundle folder")
    parser.add_argument("--icons", type=Path, required=True, help="make_icons.py's png folder")
    parser.add_argument("--out", type=Path, required=True, help="where the .deb goes")
    parser.add_argument("--revision", default="1", help="the Debian revision (default 1)")
    args = parser.parse_args(argv)
    if not (args.bundle / PACKAGE).is_file():
        print(f"build_deb: no bundle at {args.bundle}", file=sys.stderr)
        return 1
    print(build(args.bundle.resolve(), args.icons, args.out, args.revision))
    return 0


if __name__ == "__main__":
    sys.exit(main())
