"""Check the macOS disk image from any OS: every Mach-O file of the .app in it.

    python packaging/macos/check_dmg.py IMAGE.dmg|FOLDER --arch arm64 [--release] [--json]

IMAGE is extracted with 7-Zip (``7zz``, Debian's ``7zip``, or ``7z``), which reads Apple's UDIF
images (what ``hdiutil create -format UDZO`` writes) as well as plain HFS+/ISO images; a FOLDER is
checked as it is. The one ``*.app`` inside is found, its ``Contents/Info.plist`` read, then every
Mach-O file under it (thin or universal) is checked, and each problem is one line naming the file
and the reason:

- the architecture: each file must hold ``--arch`` (a universal file may hold more);
- the minimum macOS (``LC_BUILD_VERSION``, or ``LC_VERSION_MIN_MACOSX`` of older linkers) must not
  be above Info.plist's ``LSMinimumSystemVersion``: macOS would refuse to load it there;
- the load paths (``LC_LOAD_DYLIB`` and kin) must be the system's (/usr/lib, /System) or relative
  to the bundle (@rpath, @loader_path, @executable_path) and stay inside it; an ``LC_RPATH`` must
  not be absolute (it would point at the build machine: /Users/runner, /opt/homebrew...);
- a code signature (``LC_CODE_SIGNATURE``) must be there (Apple silicon runs nothing unsigned);
  with ``--release`` it must not be ad hoc and must have the hardened runtime (notarization
  demands both), and the main executable must carry every entitlement of
  packaging/macos/entitlements.plist.

The Mach-O reader is the standard library's ``struct``: the checks need the load commands and the
code signature's CodeDirectory flags and entitlements blob. PyPI's ``macholib`` (pure Python) reads
the load commands but not the signature's contents; ``lief`` reads both but is a native wheel of
several MB per platform. Neither would be a dependency of the app, and this is 150 lines.
Exit 0 when nothing was found, 1 with the problems, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import plistlib
import posixpath
import shutil
import struct
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ENTITLEMENTS = HERE / "entitlements.plist"

FAT_MAGIC, FAT_MAGIC_64 = 0xCAFEBABE, 0xCAFEBABF
MH_MAGIC, MH_MAGIC_64 = 0xFEEDFACE, 0xFEEDFACF
CPU = {7: "i386", 0x01000007: "x86_64", 12: "arm", 0x0100000C: "arm64"}
LC_REQ_DYLD = 0x80000000
LOAD_COMMANDS = {0xC, 0x18 | LC_REQ_DYLD, 0x1F | LC_REQ_DYLD, 0x20, 0x23 | LC_REQ_DYLD}
LC_RPATH = 0x1C | LC_REQ_DYLD
LC_CODE_SIGNATURE = 0x1D
LC_VERSION_MIN_MACOSX = 0x24
LC_BUILD_VERSION = 0x32
PLATFORM_MACOS = 1
CS_SUPERBLOB, CS_CODEDIRECTORY, CS_ENTITLEMENTS = 0xFADE0CC0, 0xFADE0C02, 0xFADE7171
CS_ADHOC, CS_RUNTIME = 0x2, 0x10000
SYSTEM_PREFIXES = ("/usr/lib/", "/System/Library/")


@dataclass
class Slice:
    arch: str
    minos: tuple[int, ...] | None = None
    dylibs: list[str] = field(default_factory=list)
    rpaths: list[str] = field(default_factory=list)
    signed: bool = False
    flags: int = 0
    entitlements: dict[str, object] | None = None


def version(value: int) -> tuple[int, ...]:
    """Mach-O's xxxx.yy.zz nibbles."""
    return (value >> 16, (value >> 8) & 0xFF, value & 0xFF)


def text(value: tuple[int, ...]) -> str:
    return ".".join(map(str, value[:2] if value[2:] == (0,) else value))


def parse_version(value: str) -> tuple[int, ...]:
    parts = [int(part) for part in value.split(".")]
    return tuple([*parts, 0, 0, 0][:3])


def read_slices(data: bytes) -> list[Slice] | None:
    """The slices of a Mach-O file (one for a thin file), or None when it is not one."""
    if len(data) < 8:
        return None
    (magic,) = struct.unpack_from(">I", data)
    if magic in (FAT_MAGIC, FAT_MAGIC_64):
        (count,) = struct.unpack_from(">I", data, 4)
        if count > 64:  # Java class files share 0xCAFEBABE; their count field is their version
            return None
        slices = []
        for index in range(count):
            if magic == FAT_MAGIC:
                _cpu, _sub, offset, size, _align = struct.unpack_from(">5I", data, 8 + index * 20)
            else:
                _cpu, _sub, offset, size, _align, _ = struct.unpack_from(
                    ">2I2QII", data, 8 + index * 32
                )
            thin = read_thin(data[offset : offset + size])
            if thin is not None:
                slices.append(thin)
        return slices
    thin = read_thin(data)
    return None if thin is None else [thin]


def read_thin(data: bytes) -> Slice | None:
    if len(data) < 28:
        return None
    (magic,) = struct.unpack_from("<I", data)
    if magic not in (MH_MAGIC, MH_MAGIC_64):
        return None
    cpu, _sub, _filetype, ncmds, _size, _flags = struct.unpack_from("<iiIIII", data, 4)
    found = Slice(CPU.get(cpu & 0xFFFFFFFF, f"cpu {cpu:#x}"))
    offset = 32 if magic == MH_MAGIC_64 else 28
    for _ in range(ncmds):
        cmd, size = struct.unpack_from("<II", data, offset)
        if cmd in LOAD_COMMANDS or cmd == LC_RPATH:
            (name_at,) = struct.unpack_from("<I", data, offset + 8)
            name = data[offset + name_at : offset + size].split(b"\0", 1)[0].decode()
            (found.rpaths if cmd == LC_RPATH else found.dylibs).append(name)
        elif cmd == LC_BUILD_VERSION:
            platform, minos = struct.unpack_from("<II", data, offset + 8)
            if platform == PLATFORM_MACOS:
                found.minos = version(minos)
        elif cmd == LC_VERSION_MIN_MACOSX and found.minos is None:
            found.minos = version(struct.unpack_from("<I", data, offset + 8)[0])
        elif cmd == LC_CODE_SIGNATURE:
            at, length = struct.unpack_from("<II", data, offset + 8)
            read_signature(data[at : at + length], found)
        offset += size
    return found


def read_signature(blob: bytes, into: Slice) -> None:
    """The CodeDirectory's flags and the entitlements of an embedded signature (big-endian)."""
    if len(blob) < 12 or struct.unpack_from(">I", blob)[0] != CS_SUPERBLOB:
        return
    into.signed = True
    (count,) = struct.unpack_from(">I", blob, 8)
    for index in range(count):
        _kind, at = struct.unpack_from(">II", blob, 12 + index * 8)
        magic, length = struct.unpack_from(">II", blob, at)
        if magic == CS_CODEDIRECTORY:
            into.flags |= struct.unpack_from(">I", blob, at + 12)[0]
        elif magic == CS_ENTITLEMENTS:
            into.entitlements = plistlib.loads(blob[at + 8 : at + length])


def extract(image: Path, into: Path) -> Path:
    tool = next((t for t in ("7zz", "7z", "7za") if shutil.which(t)), None)
    if tool is None:
        raise SystemExit("check_dmg: 7-Zip is needed (Debian: apt install 7zip)")
    done = subprocess.run([tool, "x", "-y", f"-o{into}", str(image)], capture_output=True,
                          text=True, check=False)  # fmt: skip
    # 7-Zip warns (exit 1/2) on HFS+ features it skips (resource forks, hard links of the
    # catalog); the files are there. A real failure leaves no .app, which is reported below.
    if done.returncode not in (0, 1, 2):
        raise SystemExit(f"check_dmg: 7-Zip could not open {image}:\n{done.stdout}{done.stderr}")
    return into


def find_app(root: Path) -> Path:
    apps = sorted(p for p in root.rglob("*.app") if (p / "Contents/Info.plist").is_file())
    if len(apps) != 1:
        raise SystemExit(f"check_dmg: expected one .app with an Info.plist, found {apps}")
    return apps[0]


def inside(path: str, app: Path) -> bool:
    return os.path.commonpath([posixpath.normpath(path), str(app)]) == str(app)


def check_load_path(name: str, file: Path, app: Path, executable: Path) -> str | None:
    if name.startswith(SYSTEM_PREFIXES):
        return None
    if name.startswith("@rpath/"):
        return None  # resolved through the LC_RPATH entries, each checked itself
    for token, base in (("@loader_path/", file.parent), ("@executable_path/", executable.parent)):
        if name.startswith(token):
            target = posixpath.join(str(base), name.removeprefix(token))
            return None if inside(target, app) else f"load path {name} points outside the bundle"
    return f"load path {name} is outside the bundle (the build machine's?)"


def check_app(app: Path, arch: str, release: bool) -> list[str]:
    info = plistlib.loads((app / "Contents/Info.plist").read_bytes())
    minimum = parse_version(str(info.get("LSMinimumSystemVersion", "0")))
    executable = app / "Contents/MacOS" / str(info.get("CFBundleExecutable", ""))
    wanted = plistlib.loads(ENTITLEMENTS.read_bytes()) if release else {}
    problems: list[str] = []
    if not executable.is_file():
        problems.append(f"{executable.relative_to(app.parent)}: CFBundleExecutable is missing")
    count = 0
    for file in sorted(p for p in app.rglob("*") if p.is_file() and not p.is_symlink()):
        slices = read_slices(file.read_bytes())
        if slices is None:
            continue
        count += 1
        name = str(file.relative_to(app.parent))

        def say(reason: str, name: str = name) -> None:
            if f"{name}: {reason}" not in problems:
                problems.append(f"{name}: {reason}")

        archs = [s.arch for s in slices]
        if arch not in archs:
            say(f"architecture {'+'.join(archs)}, not {arch}")
        for piece in (s for s in slices if s.arch == arch):
            if piece.minos is not None and piece.minos > minimum:
                say(
                    f"needs macOS {text(piece.minos)}, above LSMinimumSystemVersion {text(minimum)}"
                )
            for dylib in piece.dylibs:
                reason = check_load_path(dylib, file, app, executable)
                if reason:
                    say(reason)
            for rpath in piece.rpaths:
                reason = check_load_path(rpath + "/x", file, app, executable)
                if not rpath.startswith(("@loader_path", "@executable_path")):
                    say(f"LC_RPATH {rpath} is absolute (the build machine's?)")
                elif reason:
                    say(f"LC_RPATH {rpath} points outside the bundle")
            if not piece.signed:
                say("no code signature")
                continue
            if release and piece.flags & CS_ADHOC:
                say("signed ad hoc, not with a Developer ID")
            if release and not piece.flags & CS_RUNTIME:
                say("no hardened runtime (codesign --options runtime)")
            if release and file == executable:
                missing = sorted(
                    k for k, v in wanted.items() if (piece.entitlements or {}).get(k) != v
                )
                if missing:
                    say(f"missing entitlements {', '.join(missing)}")
    if count == 0:
        problems.append(f"{app.name}: no Mach-O file in it")
    return problems


def check(image: Path, arch: str, release: bool) -> tuple[Path, list[str]]:
    if image.is_dir():
        app = find_app(image)
        return app, check_app(app, arch, release)
    with tempfile.TemporaryDirectory(prefix="check-dmg-") as temp:
        app = find_app(extract(image, Path(temp)))
        return Path(image.name) / app.relative_to(temp), check_app(app, arch, release)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("image", type=Path, help="the .dmg, or a folder holding the .app")
    parser.add_argument("--arch", required=True, choices=["arm64", "x86_64"])
    parser.add_argument("--release", action="store_true",
                        help="signed for release: no ad hoc, hardened runtime, entitlements")  # fmt: skip
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if not args.image.exists():
        print(f"check_dmg: no {args.image}", file=sys.stderr)
        return 2
    app, problems = check(args.image, args.arch, args.release)
    if args.json:
        print(json.dumps({"app": str(app), "problems": problems}))
    else:
        for line in problems:
            print(f"check_dmg: {line}")
        print(f"check_dmg: {app}: {'FAILED' if problems else 'all Mach-O files passed'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
