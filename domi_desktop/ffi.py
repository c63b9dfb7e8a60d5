"""C libraries whose functions can be reached only with their signatures declared.

Without ``argtypes`` ctypes passes a Python int as a C ``int`` and, without ``restype``, reads every
result as one: a 64-bit handle comes back cut to 32 bits and the next call is handed garbage (the
peer check's ``GetCurrentProcess()`` -> ``OpenProcessToken``: error 6, invalid handle, so no CLI
command reached the app on Windows). A ``Library`` exposes only the functions given with a
signature, so a call to an undeclared one fails at once, on the first test that reaches it, instead
of by chance on a 64-bit machine. Every ``ctypes`` library of the package is loaded here
(tests/unit/test_ffi.py checks that none is loaded elsewhere).
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Mapping, Sequence
from typing import Any

Signature = tuple[Sequence[Any], Any]
"""``(argtypes, restype)``; a ``restype`` of ``None`` is C's ``void``."""


class Library:
    """The declared functions of one loaded library, as attributes."""

    def __init__(self, name: str, dll: ctypes.CDLL, signatures: Mapping[str, Signature]) -> None:
        self.name = name
        self.signatures = dict(signatures)
        self._functions: dict[str, Any] = {}
        for function_name, (argtypes, restype) in signatures.items():
            try:
                function = getattr(dll, function_name)
            except AttributeError:
                # A library without one of its functions is the OS's condition (Wine 8's
                # powrprof lacks PowerReadACValueIndex), which callers handle as OSError.
                raise OSError(f"{name} has no function {function_name}") from None
            function.argtypes = tuple(argtypes)
            function.restype = restype
            self._functions[function_name] = function

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["_functions"][name]
        except KeyError:
            raise AttributeError(
                f"{self.__dict__.get('name', 'the library')}.{name} has no declared signature: "
                "declare its argtypes and restype"
            ) from None


def load_c(
    path: str | None, signatures: Mapping[str, Signature], *, use_errno: bool = False
) -> Library:
    """A C-convention library (``None``: the process's own symbols, as ``dlopen(NULL)``)."""
    return Library(path or "the process", ctypes.CDLL(path, use_errno=use_errno), signatures)


def load_windows(name: str, signatures: Mapping[str, Signature]) -> Library:
    """A Windows system DLL; ``ctypes.get_last_error()`` (or its ``GetLastError``) after a call."""
    if sys.platform != "win32":
        raise OSError(f"{name} exists on Windows only, not on {sys.platform}")
    return Library(name, ctypes.WinDLL(name, use_last_error=True), signatures)
