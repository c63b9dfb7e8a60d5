"""Every C function the package calls has its signature declared (domi_desktop/ffi.py)."""

from __future__ import annotations

import ast
import ctypes
import sys
from pathlib import Path
from typing import Any

import pytest

from domi_desktop import ffi
from domi_desktop.actions import priority, winjob
from domi_desktop.ffi import Library, Signature
from domi_desktop.frontdoor.rpc import peercred
from domi_desktop.platform.idle import linux as idle_linux
from domi_desktop.platform.idle import macos as idle_macos
from domi_desktop.platform.idle import windows as idle_windows
from domi_desktop.platform.inhibit import macos as inhibit_macos
from domi_desktop.platform.inhibit import windows as inhibit_windows
from domi_desktop.platform.resume import windows as resume_windows
from domi_desktop.platform.wake import linux as wake_linux
from domi_desktop.platform.wake import windows as wake_windows
from tests.support.wine import wine_cannot

PACKAGE = Path(ffi.__file__).parent
LOADERS = {
    "CDLL",
    "WinDLL",
    "OleDLL",
    "PyDLL",
    "LibraryLoader",
    "cdll",
    "windll",
    "oledll",
    "pydll",
}

WINDOWS_TABLES: dict[str, dict[str, Signature]] = {
    "kernel32 (peer check)": peercred.KERNEL32,
    "advapi32 (peer check)": peercred.ADVAPI32,
    "kernel32 (Job Objects)": winjob.KERNEL32,
    "kernel32 (background jobs)": priority.KERNEL32,
    "ntdll (Job Objects)": winjob.NTDLL,
    "kernel32 (keep awake)": inhibit_windows.KERNEL32,
    "user32 (power window)": resume_windows.USER32,
    "kernel32 (wake timer)": wake_windows.KERNEL32,
    "powrprof (wake timers allowed)": wake_windows.POWRPROF,
    "user32 (idle time)": idle_windows.USER32,
    "kernel32 (idle time)": idle_windows.KERNEL32,
    "shell32 (presenting)": idle_windows.SHELL32,
}
OTHER_TABLES: dict[str, dict[str, Signature]] = {
    "libc (wake alarm)": wake_linux.LIBC,
    "libX11 (idle time)": idle_linux.XLIB,
    "libXss (idle time)": idle_linux.XSS,
    "CoreGraphics (idle time)": idle_macos.CG,
    **{path.rsplit("/", 1)[-1]: table for path, table in inhibit_macos.FRAMEWORKS.items()},
}


def test_no_module_but_ffi_loads_a_library_itself() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == Path(ffi.__file__):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", None)
            if name in LOADERS:
                offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {name}")  # type: ignore[attr-defined]
    assert offenders == []


@pytest.mark.parametrize("table", [*WINDOWS_TABLES.values(), *OTHER_TABLES.values()])
def test_every_signature_names_c_types_only(table: dict[str, Signature]) -> None:
    def is_c_type(kind: Any) -> bool:
        return isinstance(kind, type) and issubclass(kind, ctypes._SimpleCData | ctypes._Pointer)

    for name, (argtypes, restype) in table.items():
        assert isinstance(argtypes, tuple), name
        assert all(is_c_type(kind) for kind in argtypes), name
        assert restype is None or is_c_type(restype), name


def _some_library(signatures: dict[str, Signature]) -> Library:
    if sys.platform == "win32":
        return ffi.load_windows("kernel32", signatures)
    return ffi.load_c(None, signatures)


def test_a_function_without_a_declared_signature_cannot_be_reached() -> None:
    name = "GetTickCount" if sys.platform == "win32" else "getpid"
    library = _some_library({name: ((), ctypes.c_uint32)})
    assert getattr(library, name)() > 0
    other = "GetCurrentProcessId" if sys.platform == "win32" else "getppid"
    with pytest.raises(AttributeError, match=f"{other} has no declared signature"):
        getattr(library, other)


def test_a_library_without_a_declared_function_is_an_os_error_naming_it() -> None:
    present = "GetTickCount" if sys.platform == "win32" else "getpid"
    with pytest.raises(OSError, match="has no function domi_no_such_function"):
        _some_library({present: ((), ctypes.c_uint32), "domi_no_such_function": ((), None)})


WINE_LACKS = {
    "powrprof (wake timers allowed)": "powrprof.dll has no PowerReadACValueIndex nor "
    "PowerReadDCValueIndex (the power plan's settings)",
}


@pytest.mark.windows_only
@pytest.mark.parametrize(
    "what",
    [
        pytest.param(what, marks=wine_cannot(WINE_LACKS[what])) if what in WINE_LACKS else what
        for what in WINDOWS_TABLES
    ],
)
def test_every_declared_windows_function_exists_in_its_dll(what: str) -> None:
    library = ffi.load_windows(what.split(maxsplit=1)[0], WINDOWS_TABLES[what])
    for name, (argtypes, restype) in WINDOWS_TABLES[what].items():
        function = getattr(library, name)
        assert function.argtypes == tuple(argtypes)
        assert function.restype is restype
