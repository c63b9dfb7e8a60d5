"""Linux: the shared libraries the bundle takes from the system instead of carrying its own.

GLib and libdbus are on every Linux desktop (the session bus, the tray and the notifications the
app talks to need them; Debian's ``libglib2.0-0`` and ``libdbus-1-3`` are in every desktop task),
and the .deb declares both. Carried, they bring what the build machine's copies link: libdbus
brings libsystemd, libgcrypt, libgpg-error, liblz4 and libcap (3.3 MB), GLib's gio brings libmount,
libblkid, libselinux and PCRE2 (5 MB). Left out, the bundle is 8 MB smaller and the app uses the
same libraries as the desktop it runs on.

The spec calls ``without_system_libraries`` on PyInstaller's binaries: the system ones go, and so
does every library that only they linked (found by walking each kept file's ``DT_NEEDED``).
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterable
from pathlib import Path

# By soname. Each is one Debian package's (libglib2.0-0 ships GLib, GIO, GObject, GModule, GThread).
SYSTEM_LIBRARIES = frozenset(
    {
        "libdbus-1.so.3",
        "libglib-2.0.so.0",
        "libgio-2.0.so.0",
        "libgobject-2.0.so.0",
        "libgmodule-2.0.so.0",
        "libgthread-2.0.so.0",
    }
)

Entry = tuple[str, str, str]
"""PyInstaller's TOC entry: the path in the bundle, the source file, the type code."""


def needed(path: str) -> list[str]:
    """The sonames ``path`` links directly (``DT_NEEDED``), read by binutils' readelf."""
    done = subprocess.run(
        ["readelf", "--dynamic", "--wide", path],
        capture_output=True, text=True, check=True, env={"LC_ALL": "C"},
    )  # fmt: skip
    return [
        line.split("[", 1)[1].split("]", 1)[0]
        for line in done.stdout.splitlines()
        if "(NEEDED)" in line and "[" in line
    ]


def is_root(entry: Entry) -> bool:
    """What is loaded by name rather than linked: extension modules, Qt's plugins, libpython."""
    dest, _src, typecode = entry
    return (
        typecode == "EXTENSION"
        or "/plugins/" in "/" + dest.replace("\\", "/")
        or Path(dest).name.startswith("libpython")
    )


def without_system_libraries(
    binaries: Iterable[Entry],
    links: Callable[[str], list[str]] = needed,
    system: frozenset[str] = SYSTEM_LIBRARIES,
) -> tuple[list[Entry], list[str]]:
    """The binaries without the system's libraries and what only they linked; and the names gone."""
    entries = list(binaries)
    by_name: dict[str, Entry] = {}
    for entry in entries:
        if entry[2] == "BINARY":
            by_name.setdefault(Path(entry[0]).name, entry)
    reached: set[str] = set()
    todo = [entry for entry in entries if is_root(entry)]
    seen_roots: set[str] = set()
    while todo:
        entry = todo.pop()
        if entry[0] in seen_roots:
            continue
        seen_roots.add(entry[0])
        for name in links(entry[1]):
            if name in system or name in reached or name not in by_name:
                continue
            reached.add(name)
            todo.append(by_name[name])
    kept = [
        entry
        for entry in entries
        if Path(entry[0]).name not in system
        and (entry[2] != "BINARY" or is_root(entry) or Path(entry[0]).name in reached)
    ]
    gone = sorted({Path(entry[0]).name for entry in entries if entry not in kept})
    return kept, gone
