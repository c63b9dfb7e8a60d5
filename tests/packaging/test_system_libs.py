"""Which shared libraries the Linux bundle leaves to the system (packaging/linux/system_libs.py)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "packaging" / "linux"))
from system_libs import needed, without_system_libraries

LINKS = {
    "/src/QtDBus.abi3.so": ["libQt6DBus.so.6", "libc.so.6"],
    "/src/libQt6DBus.so.6": ["libQt6Core.so.6", "libdbus-1.so.3"],
    "/src/libQt6Core.so.6": ["libglib-2.0.so.0", "libicuuc.so.73"],
    "/src/libicuuc.so.73": [],
    "/src/libdbus-1.so.3": ["libsystemd.so.0"],
    "/src/libsystemd.so.0": ["liblz4.so.1", "libzstd.so.1"],
    "/src/liblz4.so.1": [],
    "/src/libzstd.so.1": [],
    "/src/libglib-2.0.so.0": ["libpcre2-8.so.0"],
    "/src/libpcre2-8.so.0": [],
    "/src/libqxcb.so": ["libzstd.so.1"],
}


def entry(dest: str, typecode: str = "BINARY") -> tuple[str, str, str]:
    return (dest, "/src/" + Path(dest).name, typecode)


def test_the_system_s_libraries_go_with_what_only_they_link() -> None:
    binaries = [
        entry("PySide6/QtDBus.abi3.so", "EXTENSION"),
        entry("PySide6/Qt/lib/libQt6DBus.so.6"),
        entry("PySide6/Qt/lib/libQt6Core.so.6"),
        entry("PySide6/Qt/lib/libicuuc.so.73"),
        entry("libdbus-1.so.3"),
        entry("libsystemd.so.0"),
        entry("liblz4.so.1"),
        entry("libzstd.so.1"),  # also linked by a kept plugin
        entry("libglib-2.0.so.0"),
        entry("libpcre2-8.so.0"),
        entry("PySide6/Qt/plugins/platforms/libqxcb.so"),
    ]
    kept, gone = without_system_libraries(binaries, links=lambda path: LINKS[path])
    assert {Path(dest).name for dest, _src, _kind in kept} == {
        "QtDBus.abi3.so", "libQt6DBus.so.6", "libQt6Core.so.6", "libicuuc.so.73",
        "libzstd.so.1", "libqxcb.so",
    }  # fmt: skip
    assert gone == [
        "libdbus-1.so.3", "libglib-2.0.so.0", "liblz4.so.1", "libpcre2-8.so.0", "libsystemd.so.0",
    ]  # fmt: skip


@pytest.mark.skipif(shutil.which("readelf") is None, reason="needs binutils' readelf")
def test_needed_reads_an_elf_file_s_direct_links() -> None:
    links = needed(str(Path(sys.executable).resolve()))
    assert "libc.so.6" in links
