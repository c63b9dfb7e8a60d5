"""The editor's own field widgets: a one-line cron field that can underline a span, a searchable
time-zone picker, and a small name/value table (plain values or secret names).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from zoneinfo import available_timezones

from PySide6.QtCore import QCoreApplication, QEvent, QMimeData, QObject, Qt, Signal
from PySide6.QtGui import QColor, QFontDatabase, QKeyEvent, QPalette, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QAbstractScrollArea,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QCompleter,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QTableWidget,
    QTableWidgetItem,
    QTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from domi_desktop.cron import LOCAL
from domi_desktop.platform.timezone import local_zone_name
from domi_desktop.ui.i18n import Texts, register, tr
from domi_desktop.ui.palette import colors, css_color


def _utf16_offset(text: str, index: int) -> int:
    """Qt counts text positions in UTF-16 units; Python spans count code points."""
    return len(text[:index].encode("utf-16-le")) // 2


def variable_name(name: str) -> str:
    """An environment variable's name for a secret's name: ``api-token`` → ``API_TOKEN``."""
    proposed = re.sub(r"[^A-Z0-9]+", "_", name.upper()).strip("_")
    if not proposed:
        return "SECRET"
    return f"_{proposed}" if proposed[0].isdigit() else proposed


class _WheelGuard(QObject):
    """Wheel events reach a combo or spin box only when it has the focus: scrolling a form must
    never change a value under the pointer (ten notches set "If still running" to Replace)."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() != QEvent.Type.Wheel or not isinstance(watched, QWidget):
            return False
        focused = QApplication.focusWidget()
        if focused is not None and (focused is watched or watched.isAncestorOf(focused)):
            return False
        # The form scrolls instead, as if the box were not there.
        area = watched.parentWidget()
        while area is not None and not isinstance(area, QAbstractScrollArea):
            area = area.parentWidget()
        if area is not None:
            QCoreApplication.sendEvent(area.viewport(), event)
        return True


@cache
def _wheel_guard() -> _WheelGuard:
    return _WheelGuard()


def guard_wheel(root: QWidget) -> None:
    """Every combo and spin box in ``root`` (and ``root`` itself) takes the wheel only with the
    focus; the wheel no longer gives them the focus either."""
    boxes: list[QWidget] = [*root.findChildren(QComboBox), *root.findChildren(QAbstractSpinBox)]
    if isinstance(root, QComboBox | QAbstractSpinBox):
        boxes.append(root)
    for box in boxes:
        box.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        box.installEventFilter(_wheel_guard())


class ErrorLabel(QLabel):
    """A red message under a field, in the red of the palette shown (light or dark)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWordWrap(True)
        self._restyle()

    def _restyle(self) -> None:
        css = css_color(colors().error)
        if self.styleSheet() != css:  # setting it again would raise another PaletteChange
            self.setStyleSheet(css)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self._restyle()
        super().changeEvent(event)


def error_label(name: str) -> ErrorLabel:
    """An ``ErrorLabel`` hidden until there is something to say."""
    label = ErrorLabel()
    label.setObjectName(name)
    label.hide()
    return label


def with_time(expr: str, hour: int, minute: int) -> str:
    """``expr`` firing at ``hour:minute``: its first two fields replaced, the days kept.

    Anything that is not five fields (being typed, or empty) becomes a daily expression.
    """
    fields = expr.split()
    days = fields[2:] if len(fields) == 5 else ["*", "*", "*"]
    return " ".join([str(minute), str(hour), *days])


def time_of(expr: str) -> tuple[int, int] | None:
    """``(hour, minute)`` when ``expr`` fires at one time of day, else ``None``."""
    fields = expr.split()
    if len(fields) != 5 or not (fields[0].isdigit() and fields[1].isdigit()):
        return None
    hour, minute = int(fields[1]), int(fields[0])
    return (hour, minute) if hour < 24 and minute < 60 else None


def help_label(text: str = "") -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setForegroundRole(QPalette.ColorRole.PlaceholderText)
    return label


def stacked(*widgets: QWidget) -> QWidget:
    """A field with its messages right under it, as one form row."""
    box = QWidget()
    layout = QVBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(2)
    for widget in widgets:
        layout.addWidget(widget)
    return box


def row(*widgets: QWidget, stretch: int = 0) -> QWidget:
    """Widgets side by side; the one at index ``stretch`` takes the spare width."""
    box = QWidget()
    layout = QHBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    for index, widget in enumerate(widgets):
        layout.addWidget(widget, 1 if index == stretch else 0)
    return box


def text_box(name: str, lines: int) -> QPlainTextEdit:
    """A multi-line field that Tab leaves (a tab typed into a job's input would change the job)."""
    box = QPlainTextEdit()
    box.setObjectName(name)
    box.setTabChangesFocus(True)
    box.setFixedHeight(box.fontMetrics().lineSpacing() * lines + 14)
    return box


class CronEdit(QPlainTextEdit):
    """A single-line text field that, unlike ``QLineEdit``, can underline part of its text."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setTabChangesFocus(True)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        margin = self.document().documentMargin()
        self.setFixedHeight(
            int(self.fontMetrics().lineSpacing() + 2 * margin + 2 * self.frameWidth() + 2)
        )

    def text(self) -> str:
        return self.toPlainText()

    def set_text(self, text: str) -> None:
        """Replace the text as one undoable edit (a preset can be undone with Ctrl+Z)."""
        cursor = self.textCursor()
        cursor.select(QTextCursor.SelectionType.Document)
        cursor.insertText(text)
        self.setTextCursor(cursor)

    def set_error_span(self, span: tuple[int, int] | None) -> None:
        """Underline ``span`` (code-point offsets in ``text()``) in red; ``None`` clears it."""
        selections: list[QTextEdit.ExtraSelection] = []
        text = self.text()
        if span is not None:
            start, end = sorted(span)
            start, end = min(start, len(text)), min(end, len(text))
            if start == end and start < len(text):
                end = start + 1  # an empty span still points at a character the user can see
            if start < end:
                selection = QTextEdit.ExtraSelection()
                cursor = QTextCursor(self.document())
                cursor.setPosition(_utf16_offset(text, start))
                cursor.setPosition(_utf16_offset(text, end), QTextCursor.MoveMode.KeepAnchor)
                selection.cursor = cursor
                underline = QTextCharFormat()
                underline.setUnderlineStyle(QTextCharFormat.UnderlineStyle.SpellCheckUnderline)
                red = colors().error
                underline.setUnderlineColor(red)
                tint = QColor(red)
                tint.setAlpha(40)  # a wavy line alone is easy to miss under a short span
                underline.setBackground(tint)
                selection.format = underline
                selections.append(selection)
        self.setExtraSelections(selections)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        # One line: Enter neither breaks the line nor presses the dialog's default button.
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            event.accept()
            return
        super().keyPressEvent(event)

    def insertFromMimeData(self, source: QMimeData) -> None:
        # A pasted crontab line may end with a newline; keep it on one line.
        self.insertPlainText(" ".join(source.text().splitlines()))


@cache
def _zone_names() -> tuple[str, ...]:
    # available_timezones() walks the tz database on disk: once per process is enough.
    return tuple(sorted(available_timezones()))


class ZonePicker(QComboBox):
    """An editable combo over every IANA zone, searched by any part of the name, ``Local`` first."""

    zone_changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setEditable(True)
        self.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.setMaxVisibleItems(15)
        self._local_label = tr("Local ({zone})", zone=local_zone_name() or tr("this computer"))
        self.addItem(self._local_label, LOCAL)
        names = _zone_names()
        self.addItems(list(names))
        self._known = {name.lower(): name for name in names}
        completer = QCompleter(self.model(), self)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        completer.setFilterMode(Qt.MatchFlag.MatchContains)
        completer.setCompletionMode(QCompleter.CompletionMode.PopupCompletion)
        completer.setMaxVisibleItems(12)
        self.setCompleter(completer)
        self.editTextChanged.connect(self.zone_changed)

    def zone(self) -> str | None:
        """``local``, a canonical IANA name (typed in any case), or ``None`` when unknown."""
        text = self.currentText().strip()
        if text in (self._local_label, LOCAL):
            return LOCAL
        return self._known.get(text.lower())

    def retranslate(self) -> None:
        label = tr("Local ({zone})", zone=local_zone_name() or tr("this computer"))
        was_local = self.zone() == LOCAL
        # The new label is known before the item shows it: renaming the current item changes
        # the edit text, and whoever checks the zone then must read it as Local.
        self._local_label = label
        self.setItemText(0, label)
        if was_local:
            self.setEditText(label)
        self.zone_changed.emit()

    def set_zone(self, zone: str) -> None:
        index = 0 if zone == LOCAL else self.findText(zone, Qt.MatchFlag.MatchExactly)
        if index >= 0:
            self.setCurrentIndex(index)
        self.setEditText(self.itemText(index) if index >= 0 else zone)


class PairsTable(QWidget):
    """Name/value rows with add and remove buttons.

    With ``choices`` the value of each row is picked from a combo (secret names): the table never
    holds a secret value, only the name under which the keychain keeps it.
    """

    changed = Signal()

    def __init__(
        self,
        texts: Texts,
        name_header: str,
        value_header: str,
        *,
        choices: Callable[[], list[str]] | None = None,
        propose: Callable[[str], str] = str,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._choices = choices
        self._propose = propose
        """The name a row gets for a value picked while its name is blank."""
        self.table = QTableWidget(0, 2, self)
        for column, header in enumerate((name_header, value_header)):
            item = QTableWidgetItem()
            texts.bind(item.setText, header)
            self.table.setHorizontalHeaderItem(column, item)
        # Tab leaves the table (arrows move between cells), as it leaves every field.
        self.table.setTabKeyNavigation(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 10)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.AllEditTriggers)
        rows_shown = 2  # more rows scroll; the dialog has to fit a 800-pixel-high screen
        self.table.setFixedHeight(
            self.table.horizontalHeader().sizeHint().height()
            + rows_shown * self.table.verticalHeader().defaultSectionSize()
            + 2 * self.table.frameWidth()
        )
        self.table.itemChanged.connect(self.changed)
        add = QToolButton(self)
        add.setText("+")
        texts.bind(add.setToolTip, "Add a row")
        texts.bind(add.setAccessibleName, "Add a row")
        add.clicked.connect(self._add_clicked)
        remove = QToolButton(self)
        remove.setText("−")
        texts.bind(remove.setToolTip, "Remove the selected row")
        texts.bind(remove.setAccessibleName, "Remove the selected row")
        remove.clicked.connect(self._remove_clicked)
        buttons = QVBoxLayout()
        buttons.addWidget(add)
        buttons.addWidget(remove)
        buttons.addStretch(1)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.table, 1)
        layout.addLayout(buttons)

    def add_for(self, value: str) -> None:
        """A row for ``value`` (a secret just created), under the name proposed for it."""
        self.add_row(self._propose(value), value)

    def add_row(self, name: str = "", value: str = "") -> None:
        row = self.table.rowCount()
        self.table.blockSignals(True)  # one `changed` for the whole row, below
        self.table.insertRow(row)
        self.table.setItem(row, 0, QTableWidgetItem(name))
        if self._choices is None:
            self.table.setItem(row, 1, QTableWidgetItem(value))
        else:
            self.table.setCellWidget(row, 1, self._secret_combo(value))
        self.table.blockSignals(False)
        self.changed.emit()

    def _secret_combo(self, value: str) -> QComboBox:
        assert self._choices is not None
        combo = QComboBox(self.table)
        combo.setPlaceholderText(tr("Pick a secret"))
        names = self._choices()
        for name in names:
            combo.addItem(name, name)
        if value and value not in names:
            # Keep a reference whose secret is gone, and say so, rather than drop it silently.
            combo.addItem(tr("{name} (not in the keychain)", name=value), value)
        combo.setCurrentIndex(combo.findData(value) if value else -1)
        combo.currentIndexChanged.connect(lambda _index: self._picked(combo))
        guard_wheel(combo)
        return combo

    def _picked(self, combo: QComboBox) -> None:
        for row in range(self.table.rowCount()):
            item = self.table.item(row, 0)
            if self.table.cellWidget(row, 1) is combo and item is not None and not item.text():
                picked = combo.currentData()
                if picked:
                    item.setText(self._propose(picked))  # itemChanged: `changed`
                    return
        self.changed.emit()

    def refresh_choices(self) -> None:
        """Offer names stored since the rows were made (a secret created from the editor)."""
        if self._choices is None:
            return
        names = self._choices()
        for row in range(self.table.rowCount()):
            combo = self.table.cellWidget(row, 1)
            if isinstance(combo, QComboBox):
                for name in names:
                    if combo.findData(name) < 0:
                        combo.addItem(name, name)

    def set_pairs(self, pairs: dict[str, str]) -> None:
        self.table.setRowCount(0)
        for name, value in pairs.items():
            self.add_row(name, value)
        self.changed.emit()

    def pairs(self) -> list[tuple[str, str]]:
        """Every row but the blank ones, stripped of surrounding blanks in the names."""
        result = []
        for row in range(self.table.rowCount()):
            name_item = self.table.item(row, 0)
            name = name_item.text().strip() if name_item else ""
            combo = self.table.cellWidget(row, 1)
            if isinstance(combo, QComboBox):
                value = combo.currentData() or ""
            else:
                value_item = self.table.item(row, 1)
                value = value_item.text() if value_item else ""
            if name or value:
                result.append((name, value))
        return result

    def problem(self) -> str | None:
        """Why the rows cannot be saved as they are (a nameless row, a name twice), else ``None``."""
        seen: set[str] = set()
        for name, value in self.pairs():
            if not name:
                return tr("A row has a value but no name.")
            if name in seen:
                return tr("“{name}” is set twice.", name=name)
            if self._choices is not None and not value:
                return tr("Pick a secret for “{name}”.", name=name)
            seen.add(name)
        return None

    def _add_clicked(self) -> None:
        self.add_row()
        row = self.table.rowCount() - 1
        self.table.setCurrentCell(row, 0)
        self.table.editItem(self.table.currentItem())

    def _remove_clicked(self) -> None:
        rows = sorted({index.row() for index in self.table.selectedIndexes()}, reverse=True)
        if not rows and self.table.currentRow() >= 0:
            rows = [self.table.currentRow()]
        for row in rows:
            self.table.removeRow(row)
        self.changed.emit()


register(
    "zh",
    {
        "Local ({zone})": "本地（{zone}）",
        "this computer": "本机",
        "Add a row": "添加一行",
        "Remove the selected row": "删除所选行",
        "Pick a secret": "选择密钥",
        "{name} (not in the keychain)": "{name}（钥匙串中不存在）",
        "A row has a value but no name.": "有一行只有值，没有名称。",
        "“{name}” is set twice.": "“{name}” 设置了两次。",
        "Pick a secret for “{name}”.": "请为 “{name}” 选择一个密钥。",
    },
)
