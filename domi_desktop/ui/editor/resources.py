"""The Conditions box's rows for resources and moments: a disk, a network's name and a path to wait for, and
the session's moments that run the schedule too (at login, at unlock, on waking, before sleep,
at most once per an interval), as ``policies.conditions`` and ``policies.session`` JSON."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QCheckBox, QFormLayout, QLineEdit, QSpinBox

from domi_desktop.frontdoor.triggers import RESOURCE_FIELDS, SESSION_FLAGS
from domi_desktop.frontdoor.wire import Json
from domi_desktop.ui.editor.widgets import row
from domi_desktop.ui.i18n import Texts, register

RESOURCES = (
    ("volume", "volume", "Disk", "Backup, or UUID=1234-ABCD"),
    ("network_name", "networkName", "Network name", "a Wi-Fi name, or ethernet"),
    ("path_exists", "pathExists", "Path exists", "e.g. /mnt/nas/ready"),
)
MOMENTS = (
    ("at_login", "atLogin", "At login"),
    ("at_unlock", "atUnlock", "At unlock"),
    ("on_resume", "onResume", "On waking"),
    ("before_sleep", "beforeSleep", "Before sleep"),
)
assert tuple(field for field, *_ in RESOURCES) == RESOURCE_FIELDS
assert tuple(field for field, *_ in MOMENTS) == SESSION_FLAGS[:4]


class ResourceRows:
    def __init__(self, texts: Texts) -> None:
        t = texts
        self.fields: dict[str, QLineEdit] = {}
        for field, name, _label, hint in RESOURCES:
            edit = QLineEdit()
            edit.setObjectName(name)
            t.bind(edit.setPlaceholderText, hint)
            self.fields[field] = edit
        t.bind(
            self.fields["volume"].setToolTip,
            "Wait until this disk is mounted; the job finds it at $DOMI_VOLUME_PATH.",
        )
        self.moments: dict[str, QCheckBox] = {}
        for field, name, label in MOMENTS:
            box = QCheckBox()
            box.setObjectName(name)
            t.bind(box.setText, label)
            self.moments[field] = box
        self.only = QCheckBox()
        self.only.setObjectName("onlyMoments")
        t.bind(self.only.setText, "Only then, not by its time")
        self.min_interval = QSpinBox()
        self.min_interval.setObjectName("minInterval")
        self.min_interval.setRange(0, 7 * 24 * 60)
        t.bind(self.min_interval.setPrefix, "at most once every ")
        t.bind(self.min_interval.setSuffix, " min")
        t.bind(self.min_interval.setSpecialValueText, "every time")
        self._texts = t

    def add_to(self, form: QFormLayout) -> None:
        for field, _name, label, _hint in RESOURCES:
            form.addRow(self._texts.label(label), self.fields[field])
        form.addRow(self._texts.label("Also run"), row(*self.moments.values(), stretch=1))
        form.addRow(row(self.only, self.min_interval, stretch=1))

    def connect(self, changed: Callable[[], None]) -> None:
        """``changed`` (no arguments) on every edit of these rows."""
        for edit in self.fields.values():
            edit.textChanged.connect(lambda _text: changed())
        for box in (*self.moments.values(), self.only):
            box.toggled.connect(lambda _on: changed())
        self.min_interval.valueChanged.connect(lambda _value: changed())

    def update(self) -> None:
        asked = any(box.isChecked() for box in self.moments.values())
        self.only.setEnabled(asked)
        self.min_interval.setEnabled(asked)

    def load(self, policies: Json) -> None:
        conditions = policies.get("conditions") or {}
        for field, edit in self.fields.items():
            edit.setText(conditions.get(field) or "")
        session = policies.get("session") or {}
        for field, box in self.moments.items():
            box.setChecked(bool(session.get(field)))
        self.only.setChecked(bool(session.get("only")))
        self.min_interval.setValue(round((session.get("min_interval") or 0) / 60))

    def conditions_json(self) -> Json:
        return {field: edit.text().strip() or None for field, edit in self.fields.items()}

    def session_json(self) -> Json:
        """Every field, always: clearing the boxes clears the stored triggers."""
        asked = {field: box.isChecked() for field, box in self.moments.items()}
        minutes = self.min_interval.value()
        return {
            **asked,
            "only": any(asked.values()) and self.only.isChecked(),
            "min_interval": minutes * 60 if any(asked.values()) and minutes else None,
        }


register(
    "zh",
    {
        "Disk": "磁盘",
        "Backup, or UUID=1234-ABCD": "Backup，或 UUID=1234-ABCD",
        "Network name": "网络名称",
        "a Wi-Fi name, or ethernet": "Wi-Fi 名称，或 ethernet",
        "Path exists": "路径存在",
        "e.g. /mnt/nas/ready": "例如 /mnt/nas/ready",
        "Wait until this disk is mounted; the job finds it at $DOMI_VOLUME_PATH.": (
            "等到这个磁盘挂载后再运行；任务可在 $DOMI_VOLUME_PATH 找到它。"
        ),
        "At login": "登录时",
        "At unlock": "解锁时",
        "On waking": "唤醒时",
        "Before sleep": "睡眠前",
        "Also run": "也在这些时刻运行",
        "Only then, not by its time": "只在这些时刻运行，不按时间",
        "at most once every ": "最多每 ",
        "every time": "每次都运行",
    },
)
