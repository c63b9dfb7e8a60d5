"""Whether the tests run on Windows' CPython under Wine (``make test-windows``), and a skip for
what Wine cannot do, naming the limit: never for what the project cannot do."""

from __future__ import annotations

import sys

import pytest


def _under_wine() -> bool:
    if sys.platform != "win32":
        return False
    import ctypes

    # Wine's ntdll exports its version; Windows' has no such function.
    return hasattr(ctypes.WinDLL("ntdll"), "wine_get_version")


UNDER_WINE = _under_wine()


def wine_cannot(limit: str) -> pytest.MarkDecorator:
    """Skip under Wine, saying which of Wine's limits stops the test (it runs on Windows)."""
    return pytest.mark.skipif(UNDER_WINE, reason=f"Wine 8: {limit}")


def embedded_python_cannot(limit: str) -> pytest.MarkDecorator:
    """Skip under the Wine kit's embeddable CPython (packaging/wine/kit.py), naming its limit."""
    return pytest.mark.skipif(UNDER_WINE, reason=f"the Wine kit's embeddable CPython: {limit}")
