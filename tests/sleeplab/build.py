"""Builds the sleep lab's guest from Debian packages and the host's venv (tests/sleeplab/README.md).

Cached under ``.sleeplab/<key>/`` (git-ignored); the key hashes every input (this directory's
sources, the kernel, its modules, busybox, the venv and its base Python, the installed Debian
packages), so a change to any of them builds a new guest and removes the old one:

- ``system.img``: a read-only ext4 image (made by ``mke2fs -d``, no root, no mount) holding the
  venv at its host path, the Python it was made from (its stdlib without tests), the shared
  libraries they load (``ldd``), busybox with its applets as ``/bin``, a few ``/etc`` files;
- ``initramfs.cpio``: busybox, ``/init`` (init.sh) and the kernel modules the cloud kernel has as
  modules, not built in (``MODULES`` and what they depend on, found by ``modinfo``).

What changes with every commit (the checkout's ``domi_desktop``, the agent, the init scripts) is
packed at each boot into a second small cpio appended to the first (``boot_initramfs``).

``python -m tests.sleeplab.build`` builds (or finds) the guest and prints where it is.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import importlib.util
import json
import os
import py_compile
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
CACHE = REPO / ".sleeplab"
VENV = REPO / ".venv"
BUSYBOX = Path("/bin/busybox")
"""busybox-static's binary (Debian's busybox-static package installs it here)."""

MODULES = ("virtio_pci", "virtio_blk", "overlay", "evdev")
"""What the guest loads: the PCI virtio transport and its block device (the system image; it has
freeze/restore, so it survives S3), the overlay over it, and evdev (/dev/input, for the input a
wake-to-run test injects). Everything else it needs is built into Debian's cloud kernel (ext4,
tmpfs, devtmpfs, the 8250 UARTs, the CMOS RTC, ACPI S3, the i8042 keyboard). Not there at all: 9p
(CONFIG_NET_9P is not set); virtiofs is a module but refuses to suspend ("virtio-fs:
suspend/resume not yet supported"), and 9p's virtio transport has no freeze/restore either: hence
a block image rather than the host's / over 9p."""

STDLIB_SKIP = {
    "test", "site-packages", "dist-packages", "idlelib", "tkinter", "turtledemo", "ensurepip",
    "lib2to3", "pydoc_data",
}  # fmt: skip
EXTRA_LIBS = ("libgcc_s.so.1",)
"""dlopen()ed by glibc (pthread_cancel), so ldd does not name it."""


@dataclass(frozen=True)
class Guest:
    """A built guest: the kernel, the cached initramfs and the system image."""

    kernel: Path
    initramfs: Path
    image: Path
    venv_python: Path
    repo: Path = REPO


def find_kernel() -> Path:
    kernels = sorted(glob.glob("/boot/vmlinuz-*-cloud-amd64"))
    if not kernels:
        raise FileNotFoundError(
            "no /boot/vmlinuz-*-cloud-amd64: install the Debian package linux-image-cloud-amd64"
        )
    return Path(kernels[-1])


def _stat_key(path: Path) -> str:
    info = path.stat()
    return f"{path}:{info.st_size}:{info.st_mtime_ns}"


def _python_facts(venv: Path) -> dict[str, str]:
    code = (
        "import json, os, sys, sysconfig;"
        "print(json.dumps({'base_prefix': sys.base_prefix,"
        " 'executable': os.path.realpath(sys.executable),"
        " 'stdlib': sysconfig.get_paths()['stdlib'],"
        " 'libdir': sysconfig.get_config_var('LIBDIR') or '',"
        " 'soname': sysconfig.get_config_var('INSTSONAME') or '',"
        " 'shared': str(sysconfig.get_config_var('Py_ENABLE_SHARED')),"
        " 'site': sysconfig.get_paths()['purelib']}))"
    )
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-c", code], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def _module_order(kernel: Path) -> list[tuple[str, Path]]:
    """``MODULES`` and their dependencies, each after what it needs; built-in ones are left out."""
    release = kernel.name.removeprefix("vmlinuz-")
    order: list[tuple[str, Path]] = []

    def visit(name: str) -> None:
        if any(known == name for known, _ in order):
            return
        done = subprocess.run(
            ["modinfo", "-k", release, "-F", "filename", name], capture_output=True, text=True
        )
        filename = done.stdout.strip()
        if done.returncode != 0 or not filename or filename == "(builtin)":
            return
        depends = subprocess.run(
            ["modinfo", "-k", release, "-F", "depends", name],
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        for dependency in filter(None, depends.split(",")):
            visit(dependency)
        order.append((name, Path(filename)))

    for module in MODULES:
        visit(module)
    return order


def _inputs_key(kernel: Path, facts: dict[str, str]) -> str:
    digest = hashlib.sha256()
    for source in (HERE / "build.py", HERE / "init.sh"):
        digest.update(source.name.encode() + source.read_bytes())
    parts = [
        _stat_key(kernel),
        _stat_key(BUSYBOX),
        json.dumps(facts, sort_keys=True),
        _stat_key(VENV / "pyvenv.cfg"),
        _stat_key(Path(facts["site"])),
    ]
    parts += [_stat_key(path) for path in (VENV / ".stamp-installed", Path("/var/lib/dpkg/status"))
              if path.exists()]  # fmt: skip
    digest.update("\n".join(parts).encode())
    return digest.hexdigest()[:16]


# -- the system image ---------------------------------------------------------------------------


class Staging:
    """A directory laid out as the guest's root, its files hard links to the host's (copies across
    file systems); symbolic links are kept as links, with whatever they point to."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._done: set[str] = set()

    def _dest(self, path: str) -> Path:
        return self.root / path.lstrip("/")

    def _link_or_copy(self, source: str, dest: Path) -> None:
        dest.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(source, dest)
        except OSError:
            shutil.copy2(source, dest)

    def _real_dir(self, directory: str) -> str:
        """``directory`` with its symbolic links made in the staging too; returns its real path."""
        current = "/"
        for part in directory.strip("/").split("/"):
            if not part:
                continue
            step = os.path.join(current, part)
            if os.path.islink(step):
                self.add(step)
                current = os.path.realpath(step)
            else:
                current = step
        return current

    def add(self, path: str) -> None:
        """One file, directory (empty) or link, at the same path as on the host."""
        path = os.path.normpath(path)
        if path in self._done or path == "/":
            return
        self._done.add(path)
        parent, name = os.path.split(path)
        real_parent = self._real_dir(parent)
        if real_parent != parent:
            self.add(os.path.join(real_parent, name))
            return
        dest = self._dest(path)
        if os.path.islink(path):
            target = os.readlink(path)
            dest.parent.mkdir(parents=True, exist_ok=True)
            if not dest.is_symlink():
                os.symlink(target, dest)
            self.add(os.path.join(parent, target))
        elif os.path.isdir(path):
            dest.mkdir(parents=True, exist_ok=True)
        elif os.path.exists(path):
            self._link_or_copy(path, dest)

    def add_tree(self, top: str, skip: Iterable[str] = ()) -> None:
        skipped = set(skip)
        top = self._real_dir(top)
        for directory, dirs, files in os.walk(top):
            if directory == top:
                dirs[:] = [d for d in dirs if d not in skipped]
            self._dest(directory).mkdir(parents=True, exist_ok=True)
            for name in files + [d for d in dirs if os.path.islink(os.path.join(directory, d))]:
                self.add(os.path.join(directory, name))

    def write(self, path: str, text: str, mode: int = 0o644) -> None:
        dest = self._dest(path)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(text)
        dest.chmod(mode)

    def symlink(self, path: str, target: str) -> None:
        dest = self._dest(path)
        dest.parent.mkdir(parents=True, exist_ok=True)
        if not dest.is_symlink() and not dest.exists():
            os.symlink(target, dest)


def _elf_files(tops: Iterable[str]) -> list[str]:
    found = []
    for top in tops:
        for directory, _dirs, files in os.walk(top):
            for name in files:
                if ".so" in name:
                    path = os.path.join(directory, name)
                    if os.path.isfile(path) and not os.path.islink(path):
                        found.append(path)
    return found


def _shared_libraries(elves: list[str]) -> set[str]:
    """What the dynamic loader maps for ``elves`` (ldd), the loader itself among them."""
    libs: set[str] = set()
    for start in range(0, len(elves), 64):
        done = subprocess.run(["ldd", *elves[start : start + 64]], capture_output=True, text=True)
        for line in done.stdout.splitlines():
            words = line.split()
            if "=>" in words:
                target = words[words.index("=>") + 1]
                if target.startswith("/"):
                    libs.add(target)
            elif words and words[0].startswith("/") and "(0x" in line:
                libs.add(words[0])
    return libs


def _stage_system(staging: Staging, facts: dict[str, str]) -> None:
    venv = str(VENV)
    staging.add_tree(venv)
    stdlib = facts["stdlib"]
    staging.add_tree(
        stdlib, skip=STDLIB_SKIP | {n for n in os.listdir(stdlib) if n.startswith("config-")}
    )
    staging.add(facts["executable"])
    roots = [venv, stdlib, facts["executable"]]
    if facts["soname"] and facts["shared"] in ("1", "True"):
        libpython = os.path.join(facts["libdir"], facts["soname"])
        staging.add(libpython)
        roots.append(libpython)
    elves = [facts["executable"], *_elf_files([venv, os.path.join(stdlib, "lib-dynload")])]
    for lib in sorted(_shared_libraries(elves)):
        if not lib.startswith(venv):
            staging.add(lib)
    for extra in EXTRA_LIBS:
        for candidate in glob.glob(f"/usr/lib/*-linux-gnu/{extra}"):
            staging.add(candidate)
    # busybox is the guest's /bin: sh, sleep, date, mount, init...
    for top in ("bin", "sbin", "lib", "lib64"):
        if os.path.islink(f"/{top}"):
            staging.symlink(f"/{top}", os.readlink(f"/{top}"))
    for directory in ("usr/bin", "usr/sbin", "usr/lib", "usr/lib64"):
        (staging.root / directory).mkdir(parents=True, exist_ok=True)
    busybox = staging.root / "usr/bin/busybox"
    shutil.copy2(BUSYBOX, busybox)
    listing = subprocess.run(
        [str(BUSYBOX), "--list-full"], capture_output=True, text=True, check=True
    ).stdout.split()
    for applet in listing:
        where = staging.root / applet
        where.parent.mkdir(parents=True, exist_ok=True)
        if not where.exists() and not where.is_symlink():
            os.symlink("/usr/bin/busybox", where)
    for directory in ("proc", "sys", "dev", "tmp", "run", "data", "root", "sleeplab"):
        (staging.root / directory).mkdir(exist_ok=True)
    (staging.root / REPO.relative_to("/") / "domi_desktop").mkdir(parents=True, exist_ok=True)
    staging.write("/etc/passwd", "root:x:0:0:root:/root:/bin/sh\n")
    staging.write("/etc/group", "root:x:0:\n")
    staging.write("/etc/hostname", "sleeplab\n")
    staging.write("/etc/hosts", "127.0.0.1 localhost sleeplab\n")
    staging.write("/etc/timezone", "Etc/UTC\n")
    utc = "/usr/share/zoneinfo/Etc/UTC"
    if os.path.exists(utc):
        staging.add(utc)
        staging.symlink("/etc/localtime", utc)


def _make_image(staging: Path, image: Path) -> None:
    size = 0
    inodes = 0
    seen: set[tuple[int, int]] = set()
    for directory, dirs, files in os.walk(staging):
        for name in files + dirs:
            info = os.lstat(os.path.join(directory, name))
            inodes += 1
            if stat.S_ISREG(info.st_mode) and (info.st_dev, info.st_ino) not in seen:
                seen.add((info.st_dev, info.st_ino))
                size += (info.st_size + 4095) // 4096 * 4096
    megabytes = int(size * 1.1 / 2**20) + 64 + inodes * 4096 // 2**20 // 4
    subprocess.run(
        ["mke2fs", "-q", "-F", "-t", "ext4", "-O", "^has_journal", "-m", "0",
         "-N", str(int(inodes * 1.2) + 1024), "-E", "root_owner=0:0", "-L", "sleeplab",
         "-d", str(staging), str(image), f"{megabytes}M"],
        check=True, stdout=subprocess.DEVNULL,
    )  # fmt: skip


# -- the initramfs ------------------------------------------------------------------------------


class Cpio:
    """A newc cpio archive (what the kernel unpacks as its initramfs), written without root."""

    def __init__(self) -> None:
        self._parts: list[bytes] = []
        self._inode = 1
        self._dirs: set[str] = set()

    def _entry(
        self,
        name: str,
        mode: int,
        data: bytes = b"",
        mtime: int = 0,
        rdev: tuple[int, int] = (0, 0),
    ) -> None:
        self._inode += 1
        fields = [self._inode, mode, 0, 0, 2 if stat.S_ISDIR(mode) else 1, mtime, len(data),
                  0, 0, rdev[0], rdev[1], len(name.encode()) + 1, 0]  # fmt: skip
        header = b"070701" + b"".join(f"{value:08x}".encode() for value in fields)
        blob = header + name.encode() + b"\0"
        blob += b"\0" * (-len(blob) % 4) + data + b"\0" * (-len(data) % 4)
        self._parts.append(blob)

    def directory(self, name: str, mode: int = 0o755) -> None:
        parts = name.strip("/").split("/")
        for end in range(1, len(parts) + 1):
            path = "/".join(parts[:end])
            if path not in self._dirs:
                self._dirs.add(path)
                self._entry(path, stat.S_IFDIR | mode)

    def file(self, name: str, data: bytes, mode: int = 0o644, mtime: int = 0) -> None:
        name = name.strip("/")
        if "/" in name:
            self.directory(name.rsplit("/", 1)[0])
        self._entry(name, stat.S_IFREG | mode, data, mtime)

    def device(self, name: str, major: int, minor: int) -> None:
        self._entry(name.strip("/"), stat.S_IFCHR | 0o600, rdev=(major, minor))

    def tree(self, source: Path, under: str, compile_python: bool = False) -> None:
        """The files and directories of ``source`` (no links), mtimes kept; with
        ``compile_python`` each module's .pyc too (its source's mtime and size in it, as the
        guest checks them), so the guest's Python, emulated, compiles nothing."""
        for directory, dirs, files in os.walk(source):
            dirs[:] = sorted(d for d in dirs if not (compile_python and d == "__pycache__"))
            relative = os.path.relpath(directory, source)
            base = under if relative == "." else f"{under}/{relative}"
            self.directory(base)
            for name in sorted(files):
                path = os.path.join(directory, name)
                info = os.lstat(path)
                if not stat.S_ISREG(info.st_mode):
                    continue
                mtime = int(info.st_mtime)
                self.file(
                    f"{base}/{name}", Path(path).read_bytes(), stat.S_IMODE(info.st_mode), mtime
                )
                if compile_python and name.endswith(".py"):
                    pyc = os.path.relpath(importlib.util.cache_from_source(path), directory)
                    self.file(f"{base}/{pyc}", _pyc(path), 0o644, mtime)

    def bytes(self) -> bytes:
        trailer = Cpio()
        trailer._inode = 0
        trailer._entry("TRAILER!!!", 0)
        return b"".join(self._parts) + trailer._parts[0]


def _pyc(path: str) -> bytes:
    """The timestamp .pyc of ``path`` as this Python (the venv's, the guest's too) writes it."""
    with tempfile.TemporaryDirectory() as scratch:
        out = os.path.join(scratch, "module.pyc")
        py_compile.compile(path, cfile=out, doraise=True,
                           invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP)  # fmt: skip
        return Path(out).read_bytes()


def _make_initramfs(kernel: Path, out: Path) -> None:
    archive = Cpio()
    for directory in ("bin", "dev", "proc", "sys", "modules"):
        archive.directory(directory)
    archive.device("dev/console", 5, 1)
    archive.file("bin/busybox", BUSYBOX.read_bytes(), 0o755)
    archive.file("init", (HERE / "init.sh").read_bytes(), 0o755)
    order = _module_order(kernel)
    for name, path in order:
        data = path.read_bytes()
        if path.suffix == ".xz":
            import lzma

            data = lzma.decompress(data)
        archive.file(f"modules/{name}.ko", data)
    archive.file("modules/order", "\n".join(name for name, _ in order).encode() + b"\n")
    out.write_bytes(archive.bytes())


def boot_initramfs(guest: Guest, out: Path, inittab: str) -> None:
    """The guest's initramfs for one boot: the cached one, then what changes with each commit
    (the checkout's package, the agent, the init scripts), unpacked by /init onto the root."""
    archive = Cpio()
    package = guest.repo / "domi_desktop"
    archive.tree(package, f"boot-files/{package.relative_to('/')}", compile_python=True)
    archive.file("boot-files/sleeplab/agent.py", (HERE / "agent.py").read_bytes(), 0o755)
    archive.file("boot-files/sleeplab/stage2.sh", (HERE / "stage2.sh").read_bytes(), 0o755)
    archive.file("boot-files/etc/inittab", inittab.encode())
    out.write_bytes(guest.initramfs.read_bytes() + archive.bytes())


# -- the cache ----------------------------------------------------------------------------------


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    import fcntl  # POSIX only; the test modules that import this are collected on Windows too

    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def build(log: bool = True) -> Guest:
    """The guest for the current inputs: from the cache, or built (and older ones removed)."""
    kernel = find_kernel()
    if not BUSYBOX.exists():
        raise FileNotFoundError(f"no {BUSYBOX}: install the Debian package busybox-static")
    facts = _python_facts(VENV)
    key = _inputs_key(kernel, facts)
    where = CACHE / key
    guest = Guest(kernel, where / "initramfs.cpio", where / "system.img", VENV / "bin" / "python")
    with _locked(CACHE / ".lock"):
        if (where / "done").exists():
            return guest
        started = time.monotonic()
        shutil.rmtree(where, ignore_errors=True)
        where.mkdir(parents=True)
        staging_dir = where / "staging"
        _stage_system(Staging(staging_dir), facts)
        _make_image(staging_dir, guest.image)
        shutil.rmtree(staging_dir)
        _make_initramfs(kernel, guest.initramfs)
        (where / "done").write_text(json.dumps({"kernel": str(kernel), **facts}, indent=1))
        for old in CACHE.iterdir():
            if old.is_dir() and old.name != key:
                shutil.rmtree(old, ignore_errors=True)
        if log:
            print(f"sleeplab: built the guest in {time.monotonic() - started:.0f} s: {where}",
                  file=sys.stderr)  # fmt: skip
    return guest


if __name__ == "__main__":
    print(build())
