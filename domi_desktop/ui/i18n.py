"""Every visible string goes through ``tr``; English is the key, other languages are catalogs.

Each UI module registers its own catalog (``register("zh", {...})``) next to the strings it uses,
so a window and its translations change together. ``missing()`` lists keys looked up in a
language that has no translation for them (tests fail on it).

Changing the language re-translates the windows that are open: every top-level widget gets Qt's
``LanguageChange`` event, and our windows set their texts again (``Texts`` remembers them). Qt's
own strings (standard buttons, context menus of text fields) come from the ``qtbase`` catalog that
PySide6 ships, loaded as a ``QTranslator``. Chinese catalogs use full-width punctuation (，：（）？).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from PySide6.QtCore import QCoreApplication, QEvent, QLibraryInfo, QLocale, QTranslator
from PySide6.QtWidgets import QApplication, QLabel

from domi_desktop import timefmt
from domi_desktop.frontdoor.settings import LANGUAGES

_catalogs: dict[str, dict[str, str]] = {"zh": {}}
_language = "en"
_missing: set[tuple[str, str]] = set()
_QT_CATALOGS = {"zh": "zh_CN"}
"""Our language codes -> the suffix of Qt's own catalogs (``qtbase_zh_CN.qm``)."""
_qt_translator: QTranslator | None = None


def register(language: str, catalog: Mapping[str, str]) -> None:
    """Add a module's translations. One English text has one translation: a second, different
    one would win or lose by the order in which modules happen to be imported."""
    known = _catalogs.setdefault(language, {})
    for text, translated in catalog.items():
        if known.get(text, translated) != translated:
            raise ValueError(
                f"{language}: {text!r} is already translated as {known[text]!r}, not {translated!r}"
            )
    known.update(catalog)


def set_language(language: str) -> None:
    """Switch the language; open windows are re-translated at once (when an app is running)."""
    global _language
    if language not in LANGUAGES:
        raise ValueError(f"unsupported language {language!r}; supported: {', '.join(LANGUAGES)}")
    changed = language != _language
    _language = language
    app = QCoreApplication.instance()
    if app is None:
        return
    _load_qt_catalog(app)
    if changed and isinstance(app, QApplication):
        for window in app.topLevelWidgets():
            # Sent, not posted: the windows read right after this call already speak it.
            QCoreApplication.sendEvent(window, QEvent(QEvent.Type.LanguageChange))


def _load_qt_catalog(app: QCoreApplication) -> None:
    global _qt_translator
    if _qt_translator is not None:
        app.removeTranslator(_qt_translator)
        _qt_translator = None
    suffix = _QT_CATALOGS.get(_language)
    if suffix is None:
        return
    translator = QTranslator(app)
    folder = QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)
    if translator.load(QLocale(suffix), "qtbase", "_", folder):
        app.installTranslator(translator)
        _qt_translator = translator


def qt_catalog_loaded() -> bool:
    """Whether Qt's own strings (standard buttons) are translated by Qt's catalog."""
    return _qt_translator is not None


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


class Texts:
    """The translatable texts of a window: set now, and set again on ``retranslate()``."""

    def __init__(self) -> None:
        self._bound: list[tuple[Callable[[str], object], str, dict[str, Any]]] = []

    def bind(self, setter: Callable[[str], object], text: str, /, **values: Any) -> str:
        self._bound.append((setter, text, values))
        translated = tr(text, **values)
        setter(translated)
        return translated

    def label(self, text: str, /, **values: Any) -> QLabel:
        label = QLabel()
        self.bind(label.setText, text, **values)
        return label

    def retranslate(self) -> None:
        for setter, text, values in self._bound:
            setter(tr(text, **values))


def missing() -> set[tuple[str, str]]:
    return set(_missing)


def reset_missing() -> None:
    _missing.clear()


register(
    "zh",
    {
        "Mon": "周一",
        "Tue": "周二",
        "Wed": "周三",
        "Thu": "周四",
        "Fri": "周五",
        "Sat": "周六",
        "Sun": "周日",
    },
)


def weekdays() -> tuple[str, ...]:
    return tuple(tr(day) for day in timefmt.WEEKDAYS)


def format_moment(moment: datetime, *, year: bool = False) -> str:
    """``timefmt.format_moment`` with the weekday in the app's language."""
    return timefmt.format_moment(moment, year=year, weekdays=weekdays())


_CITIES = {
    "New York": "纽约", "Los Angeles": "洛杉矶", "Chicago": "芝加哥", "Denver": "丹佛",
    "Toronto": "多伦多", "Vancouver": "温哥华", "Mexico City": "墨西哥城", "Sao Paulo": "圣保罗",
    "London": "伦敦", "Paris": "巴黎", "Berlin": "柏林", "Madrid": "马德里", "Rome": "罗马",
    "Amsterdam": "阿姆斯特丹", "Zurich": "苏黎世", "Stockholm": "斯德哥尔摩", "Moscow": "莫斯科",
    "Riga": "里加", "Istanbul": "伊斯坦布尔", "Dubai": "迪拜", "Kolkata": "加尔各答",
    "Shanghai": "上海", "Hong Kong": "香港", "Taipei": "台北", "Singapore": "新加坡",
    "Tokyo": "东京", "Seoul": "首尔", "Sydney": "悉尼", "Auckland": "奥克兰", "Honolulu": "檀香山",
}  # fmt: skip
"""The zones' cities in Chinese: those people schedule in most; any other keeps its English name."""


def zone_name(tz: str) -> str:
    """The city a zone is known by (``America/New_York`` -> ``New York``), in the app's language
    when it has a name for it (``纽约``)."""
    label = timefmt.zone_label(tz)
    return _CITIES.get(label, label) if _language == "zh" else label


def person_time(moment: datetime, tz: str, *, brief: bool = True, year: bool = False) -> str:
    """``Tue 14:00 (09:00 New York)``: the time on the local clock, the schedule's beside it
    when its zone keeps another; without ``brief`` the date too (``Tue 03-05 14:00 (…)``)."""
    from domi_desktop.cron import local_zone, zone_for
    from domi_desktop.errors import DomiError

    try:
        zone = zone_for(tz)
    except DomiError:
        zone = None
    return timefmt.for_person(
        moment,
        local_zone(),
        schedule_zone=zone,
        schedule_zone_name=zone_name(tz),
        brief=brief,
        year=year,
        weekdays=weekdays(),
    )
