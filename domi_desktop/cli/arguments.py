"""Argument types the grammar checks before any command runs (kept light: the parser loads it)."""

from __future__ import annotations

import argparse


def text_path(value: str) -> str:
    """A path domi-desktop can write down and show on one line. Bytes of argv that are not UTF-8
    arrive as lone surrogates, which no database row, log line or terminal can hold; a control
    character (a NUL, a line break) cannot be shown, and a NUL ends a path at the system's door."""
    if any(ord(char) < 0x20 or 0x7F <= ord(char) < 0xA0 for char in value):
        raise argparse.ArgumentTypeError(
            f"{value!r} holds a control character; domi-desktop shows its paths: use another name"
        )
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raw = value.encode("utf-8", "surrogateescape")
        raise argparse.ArgumentTypeError(
            f"{raw!r} is not UTF-8; domi-desktop keeps its paths as text: use another name"
        ) from None
    return value
