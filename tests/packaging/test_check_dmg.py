"""packaging/macos/check_dmg.py on real Mach-O files, in disk images made here.

The Mach-O files are psutil's (the version pyproject pins), from its macOS wheels on PyPI: the
arm64 one is signed ad hoc by Apple's linker and needs macOS 11; the x86_64 one is unsigned and
needs 10.9. The images are plain HFS/ISO hybrids written by Debian's ``genisoimage`` (macOS mounts
them; no Debian tool writes Apple's compressed UDIF format, which 7-Zip reads the same way: the
release workflow runs the check on the real UDZO image). Each broken variant changes one thing of
the good image and must fail with a message naming the file and the reason. Needs the package
registry (pip download, cached by pip) and ``genisoimage`` and ``7zz``; slow, so PACKAGE_TEST=1.
"""

from __future__ import annotations

import importlib.util
import os
import plistlib
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHECK = ROOT / "packaging/macos/check_dmg.py"
PSUTIL = next(
    re.search(r'"psutil==([^"]+)"', line).group(1)  # type: ignore[union-attr]
    for line in (ROOT / "pyproject.toml").read_text().splitlines()
    if '"psutil==' in line
)
LIB = "psutil/_psutil_osx.abi3.so"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        os.environ.get("PACKAGE_TEST") != "1",
        reason="downloads macOS wheels from PyPI: set PACKAGE_TEST=1 (make package-test)",
    ),
]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_dmg", CHECK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["check_dmg"] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


check_dmg = _load()


@pytest.fixture(scope="module")
def machos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """The real library of each architecture, from psutil's macOS wheels."""
    out = tmp_path_factory.mktemp("wheels")
    found: dict[str, bytes] = {}
    for arch, platform in (("arm64", "macosx_11_0_arm64"), ("x86_64", "macosx_10_9_x86_64")):
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
             "--platform", platform, "-d", str(out / arch), f"psutil=={PSUTIL}"],
            capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        (wheel,) = (out / arch).glob("*.whl")
        with zipfile.ZipFile(wheel) as archive:
            found[arch] = archive.read(LIB)
    return found


def make_app(folder: Path, executable: bytes, library: bytes, minimum: str = "13.0") -> Path:
    app = folder / "domi-desktop.app/Contents"
    (app / "MacOS").mkdir(parents=True)
    (app / "Frameworks").mkdir()
    (app / "MacOS/domi-desktop").write_bytes(executable)
    (app / "Frameworks/libpsutil.so").write_bytes(library)
    info = {"CFBundleExecutable": "domi-desktop", "LSMinimumSystemVersion": minimum}
    (app / "Info.plist").write_bytes(plistlib.dumps(info))
    return folder


def make_image(folder: Path, image: Path) -> Path:
    if shutil.which("genisoimage") is None:
        pytest.fail("genisoimage is missing (make system-deps)")
    subprocess.run(
        ["genisoimage", "-quiet", "-V", "domi-desktop", "-D", "-R", "-hfs", "-o", str(image),
         str(folder)],
        check=True,
    )  # fmt: skip
    return image


def run_check(image: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(CHECK), str(image), *args],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_the_reader_sees_what_the_real_files_are(machos: dict[str, bytes]) -> None:
    (arm,) = check_dmg.read_slices(machos["arm64"])
    assert (arm.arch, arm.minos, arm.signed) == ("arm64", (11, 0, 0), True)
    assert arm.flags & check_dmg.CS_ADHOC and not arm.flags & check_dmg.CS_RUNTIME
    assert "/usr/lib/libSystem.B.dylib" in arm.dylibs
    (intel,) = check_dmg.read_slices(machos["x86_64"])
    assert (intel.arch, intel.minos, intel.signed) == ("x86_64", (10, 9, 0), False)
    assert check_dmg.read_slices(b"#!/bin/sh\n") is None


def test_a_good_image_passes(machos: dict[str, bytes], tmp_path: Path) -> None:
    image = make_image(
        make_app(tmp_path / "app", machos["arm64"], machos["arm64"]), tmp_path / "good.dmg"
    )
    done = run_check(image, "--arch", "arm64")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "all Mach-O files passed" in done.stdout


def _with_load_path(data: bytes, old: bytes, new: bytes) -> bytes:
    assert len(new) <= len(old) and old in data
    return data.replace(old, new.ljust(len(old), b"\0"), 1)


BROKEN = {
    "wrong architecture": (
        lambda m: (m["arm64"], m["x86_64"]), "13.0", [],
        "Frameworks/libpsutil.so: architecture x86_64, not arm64",
    ),
    "minimum OS above LSMinimumSystemVersion": (
        lambda m: (m["arm64"], m["arm64"]), "10.15", [],
        "MacOS/domi-desktop: needs macOS 11.0, above LSMinimumSystemVersion 10.15",
    ),
    "a load path on the build machine": (
        lambda m: (
            m["arm64"],
            _with_load_path(m["arm64"], b"/usr/lib/libSystem.B.dylib", b"/Users/runner/libSys.dylib"),
        ),
        "13.0", [],
        "Frameworks/libpsutil.so: load path /Users/runner/libSys.dylib is outside the bundle",
    ),
    "a load path leaving the bundle": (
        lambda m: (
            m["arm64"],
            _with_load_path(m["arm64"], b"/usr/lib/libSystem.B.dylib", b"@loader_path/../../../x"),
        ),
        "13.0", [],
        "Frameworks/libpsutil.so: load path @loader_path/../../../x points outside the bundle",
    ),
    "no signature": (
        lambda m: (m["x86_64"], m["x86_64"]), "13.0", ["--arch", "x86_64"],
        "MacOS/domi-desktop: no code signature",
    ),
    "ad hoc where a release needs the hardened runtime": (
        lambda m: (m["arm64"], m["arm64"]), "13.0", ["--release"],
        "Frameworks/libpsutil.so: no hardened runtime",
    ),
    "missing entitlements in a release": (
        lambda m: (m["arm64"], m["arm64"]), "13.0", ["--release"],
        "MacOS/domi-desktop: missing entitlements com.apple.security.cs.",
    ),
}  # fmt: skip


@pytest.mark.parametrize("variant", BROKEN)
def test_each_broken_variant_fails_naming_the_file_and_the_reason(
    variant: str, machos: dict[str, bytes], tmp_path: Path
) -> None:
    pick, minimum, args, expected = BROKEN[variant]
    executable, library = pick(machos)
    folder = make_app(tmp_path / "app", executable, library, minimum)
    image = make_image(folder, tmp_path / "broken.dmg")
    arch = [] if "--arch" in args else ["--arch", "arm64"]
    done = run_check(image, *arch, *args)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"check_dmg: domi-desktop.app/Contents/{expected}" in done.stdout, done.stdout


def test_a_folder_is_checked_as_it_is(machos: dict[str, bytes], tmp_path: Path) -> None:
    folder = make_app(tmp_path / "app", machos["arm64"], machos["x86_64"])
    assert run_check(folder, "--arch", "arm64").returncode == 1
    assert run_check(folder, "--arch", "arm64", "--json").stdout.startswith('{"app": ')
