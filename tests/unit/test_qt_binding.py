"""Guards against Qt binding releases that would take the app down."""

from __future__ import annotations

import sys

from PySide6.QtCore import QObject, QTimer


def test_qt_calls_returning_nothing_keep_nones_reference_count() -> None:
    """PySide6 6.12.0 on CPython 3.11 drops a reference to None on every such call; after a few
    thousand the interpreter aborts (none_dealloc). The pinned 6.11.3 does not."""
    thing, timer = QObject(), QTimer()
    before = sys.getrefcount(None)
    for _ in range(1000):
        thing.setObjectName("x")
        timer.setInterval(5)
    assert sys.getrefcount(None) >= before - 10
