"""The editor's Notes box: the user's own words kept with the schedule (why it exists, whom to
call when it fails), plain text of several lines, checked against the service's limits."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QGroupBox, QPlainTextEdit, QVBoxLayout

from domi_desktop.errors import ParamError
from domi_desktop.frontdoor.wire import MAX_NOTES, check_notes
from domi_desktop.ui.editor.widgets import ErrorLabel
from domi_desktop.ui.i18n import Texts, register, tr

LINES_SHOWN = 4
"""Lines the box shows before it scrolls: room to read a note without crowding the form."""


class NotesBox(QGroupBox):
    """A multi-line plain-text box; ``changed`` on every edit."""

    changed = Signal()

    def __init__(self, texts: Texts, error: ErrorLabel) -> None:
        super().__init__()
        t = texts
        t.bind(self.setTitle, "Notes")
        self.text = QPlainTextEdit()
        self.text.setObjectName("notes")
        t.bind(self.text.setAccessibleName, "Notes")
        t.bind(self.text.setPlaceholderText, "Why this job exists, whom to call when it fails…")
        # Tab leaves the box like every other field of the editor; pasted tabs are kept.
        self.text.setTabChangesFocus(True)
        lines = self.text.fontMetrics().lineSpacing() * LINES_SHOWN
        frame = 2 * (self.text.frameWidth() + int(self.text.document().documentMargin()))
        self.text.setFixedHeight(lines + frame)
        self.text.textChanged.connect(self.changed)
        layout = QVBoxLayout(self)
        layout.addWidget(self.text)
        layout.addWidget(error)

    def load(self, notes: str) -> None:
        self.text.setPlainText(notes)

    def notes(self) -> str:
        return self.text.toPlainText()

    def problem(self) -> str | None:
        """What stops these notes from being saved, in the user's language; None when nothing."""
        text = self.notes()
        try:
            check_notes(text)
        except ParamError:
            if len(text) > MAX_NOTES:
                return tr(
                    "The notes are too long ({length} characters, at most {count}).",
                    length=len(text),
                    count=MAX_NOTES,
                )
            return tr("The notes hold a control character: remove it (text, new lines and tabs).")
        return None


register(
    "zh",
    {
        "Notes": "备注",
        "Why this job exists, whom to call when it fails…": "这个任务为何存在，失败时联系谁……",
        "The notes are too long ({length} characters, at most {count}).": (
            "备注太长（{length} 个字符，最多 {count} 个）。"
        ),
        "The notes hold a control character: remove it (text, new lines and tabs).": (
            "备注中有控制字符：请删除它（只能是文字、换行和制表符）。"
        ),
    },
)
