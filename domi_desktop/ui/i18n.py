"""Every visible string goes through ``tr``; English is the key, other languages are catalogs.

Each UI module registers its own catalog (``register("zh", {...})``) next to the strings it uses,
so a window and its translations change together. ``missing()`` lists keys looked up in a
language that has no translation for them (tests fail on it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

LANGUAGES = {"en": "English", "zh": "简体中文"}

_catalogs: dict[str, dict[str, str]] = {"zh": {}}
_language = "en"
_missing: set[tuple[str, str]] = set()


def register(language: str, catalog: Mapping[str, str]) -> None:
    _catalogs.setdefault(language, {}).update(catalog)


def set_language(language: str) -> None:
    global _language
    if language not in LANGUAGES:
        raise ValueError(f"unsupported language {language!r}; supported: {', '.join(LANGUAGES)}")
    _language = language


def language() -> str:
    return _language


def cron_language() -> str:
    """The language code ``domi_desktop.cron.describe`` takes."""
    return "zh" if _language == "zh" else "en"


def tr(text: str, /, **values: Any) -> str:
    """``text`` in the current language, with ``{name}`` fields filled from ``values``."""
    if _language != "en":
        translated = _catalogs.get(_language, {}).get(text)
        if translated is None:
            _missing.add((_language, text))
        else:
            text = translated
    return text.format(**values) if values else text


def missing() -> set[tuple[str, str]]:
    return set(_missing)


def reset_missing() -> None:
    _missing.clear()
