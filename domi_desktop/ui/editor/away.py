"""The editor's rows for the opportunity conditions: "Only when I'm away from the computer for
... min" (and what coming back does to the job), and "Only between" a window's hours (and what
an unused window does), as the service's ``policies.conditions`` fields."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from PySide6.QtWidgets import QCheckBox, QComboBox, QFormLayout, QLineEdit, QSpinBox

from domi_desktop.frontdoor.wire import Json, parse_conditions
from domi_desktop.model import AtWindowEnd, OnReturn
from domi_desktop.ui.editor.widgets import row
from domi_desktop.ui.i18n import Texts, register

ON_RETURN = (
    (OnReturn.pause, "pause it until I step away again"),
    (OnReturn.stop, "stop it (it runs once more then)"),
    (OnReturn.carry_on, "let it run"),
)
AT_WINDOW_END = (
    (AtWindowEnd.skip, "skip the run when it ends unused"),
    (AtWindowEnd.run, "run it when it ends unused"),
)


class AwayRows:
    def __init__(self, texts: Texts) -> None:
        t = texts
        self.away = QCheckBox()
        self.away.setObjectName("whenAway")
        t.bind(self.away.setText, "Only when I'm away from the computer for")
        self.minutes = QSpinBox()
        self.minutes.setObjectName("awayMinutes")
        self.minutes.setRange(1, 24 * 60)
        self.minutes.setValue(10)
        t.bind(self.minutes.setSuffix, " min")
        self.on_return = self._combo(t, "onReturn", ON_RETURN, "When I come back")
        self.window = QLineEdit()
        self.window.setObjectName("window")
        self.window.setPlaceholderText("22:00-06:00")
        t.bind(self.window.setToolTip, "Start only within these hours, once per period.")
        self.at_window_end = self._combo(t, "atWindowEnd", AT_WINDOW_END, "At the window's end")
        self._texts = t

    @staticmethod
    def _combo(
        t: Texts, name: str, items: tuple[tuple[OnReturn | AtWindowEnd, str], ...], label: str
    ) -> QComboBox:
        combo = QComboBox()
        combo.setObjectName(name)
        for index, (member, text) in enumerate(items):
            combo.addItem("", member.value)
            t.bind(partial(combo.setItemText, index), text)
        t.bind(combo.setAccessibleName, label)
        return combo

    def add_to(self, form: QFormLayout) -> None:
        form.addRow(self.away, row(self.minutes, self.on_return, stretch=1))
        form.addRow(self._texts.label("Only between"), row(self.window, self.at_window_end))

    def connect(self, changed: Callable[[], None]) -> None:
        def told(*_: object) -> None:  # the signals' values are read from the rows
            changed()

        self.away.toggled.connect(told)
        self.minutes.valueChanged.connect(told)
        self.window.textChanged.connect(told)
        for combo in (self.on_return, self.at_window_end):
            combo.currentIndexChanged.connect(told)

    def update(self) -> None:
        self.minutes.setEnabled(self.away.isChecked())
        self.on_return.setEnabled(self.away.isChecked())
        self.at_window_end.setEnabled(bool(self.window.text().strip()))

    def load(self, policies: Json) -> None:
        c = parse_conditions(policies.get("conditions"))
        self.away.setChecked(c.away is not None)
        if c.away is not None:
            self.minutes.setValue(max(1, round(c.away.total_seconds() / 60)))
        self.on_return.setCurrentIndex(self.on_return.findData(c.on_return.value))
        self.window.setText(c.window.text if c.window is not None else "")
        self.at_window_end.setCurrentIndex(self.at_window_end.findData(c.at_window_end.value))

    def conditions_json(self) -> Json:
        away = self.away.isChecked()
        window = self.window.text().strip()
        return {
            "away": self.minutes.value() * 60 if away else None,
            "on_return": self.on_return.currentData() if away else OnReturn.pause.value,
            "window": window or None,
            "at_window_end": self.at_window_end.currentData() if window else "skip",
        }


register(
    "zh",
    {
        "Only when I'm away from the computer for": "仅在我离开电脑至少",
        "pause it until I step away again": "我回来时暂停，再次离开后继续",
        "stop it (it runs once more then)": "我回来时停止（之后再运行一次）",
        "let it run": "我回来时继续运行",
        "When I come back": "我回来时",
        "Start only within these hours, once per period.": "只在这段时间内开始，每个周期一次。",
        "skip the run when it ends unused": "时段结束仍未运行则跳过",
        "run it when it ends unused": "时段结束仍未运行则照常运行",
        "At the window's end": "时段结束时",
        "Only between": "仅在时段内",
    },
)
