"""A run's log as the history shows it: the end of the file (where a failure is explained),
cut at a line start, with a note when it is missing, empty or shortened."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QFontDatabase, QTextCursor
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from domi_desktop.model import Run, RunStatus, printed_nothing
from domi_desktop.ui.i18n import register, tr
from domi_desktop.ui.screen_fit import fit_to_screen

LOG_VIEW_LIMIT = 1024 * 1024
"""Bytes of a log shown: its end is what explains a failure, and a text view of a
multi-gigabyte log would freeze the app."""

register(
    "zh",
    {
        "Log of run {id} (“{schedule}”)": "第 {id} 号运行的日志（“{schedule}”）",
        "This run has no log: it never started.": "这次运行没有日志：它没有开始。",
        "This run was skipped, so it has no log.": "这次运行已跳过，因此没有日志。",
        "No log was kept for this run.": "这次运行没有保存日志。",
        "Nothing printed yet.": "还没有任何输出。",
        "This run printed nothing.": "这次运行没有任何输出。",
        "The log file {path} no longer exists (deleted or moved).": (
            "日志文件 {path} 已不存在（被删除或移动）。"
        ),
        "Cannot read the log file {path}: {error}": "无法读取日志文件 {path}：{error}",
        "The log is empty.": "日志为空。",
        "Showing the last {shown} of {total}.": "仅显示最后 {shown}（共 {total}）。",
        "{size} KB": "{size} KB",
        "{size} MB": "{size} MB",
    },
)


@dataclass(frozen=True)
class LogTail:
    text: str
    note: str
    """What the user should know about ``text``: missing, empty, cut; empty if nothing."""


def run_log(run: Run, limit: int = LOG_VIEW_LIMIT) -> LogTail:
    """What the log window shows for ``run``."""
    if run.log_path is not None:
        if not os.path.exists(run.log_path):
            if run.status is RunStatus.running:
                return LogTail("", tr("Nothing printed yet."))
            if printed_nothing(run.output_tail):
                return LogTail("", tr("This run printed nothing."))
        return read_log_tail(run.log_path, limit)
    if run.status is RunStatus.skipped:
        return LogTail("", tr("This run was skipped, so it has no log."))
    if run.started_at is None:
        return LogTail("", tr("This run has no log: it never started."))
    return LogTail("", tr("No log was kept for this run."))


def read_log_tail(path: str, limit: int = LOG_VIEW_LIMIT) -> LogTail:
    """The last ``limit`` bytes of the log at ``path``, as text starting at a line boundary."""
    try:
        with Path(path).open("rb") as file:
            total = file.seek(0, os.SEEK_END)
            start = max(0, total - limit)
            file.seek(start)
            data = file.read(limit)
    except FileNotFoundError:
        return LogTail(
            "", tr("The log file {path} no longer exists (deleted or moved).", path=path)
        )
    except OSError as error:
        message = tr(
            "Cannot read the log file {path}: {error}", path=path, error=error.strerror or error
        )
        return LogTail("", message)
    text = data.decode("utf-8", errors="replace")
    if not start:
        return LogTail(text, "" if text else tr("The log is empty."))
    # The cut may fall inside a line, even inside a UTF-8 character: start at the next line.
    text = text.partition("\n")[2]
    note = tr("Showing the last {shown} of {total}.", shown=_size(limit), total=_size(total))
    return LogTail(text, note)


def _size(size: int) -> str:
    if size < 1024 * 1024:
        return tr("{size} KB", size=f"{size / 1024:,.0f}")
    return tr("{size} MB", size=f"{size / 1024 / 1024:,.1f}")


class LogDialog(QDialog):
    """A run's log, read only, scrolled to its end."""

    def __init__(self, run: Run, schedule: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("logDialog")
        self.setWindowTitle(tr("Log of run {id} (“{schedule}”)", id=run.id, schedule=schedule))
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        tail = run_log(run)
        if tail.text:
            fit_to_screen(self, QSize(820, 560))
        self.note = QLabel(tail.note)
        self.note.setObjectName("logNote")
        self.note.setWordWrap(True)
        self.note.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.note.setVisible(bool(tail.note))
        self.view = QPlainTextEdit()
        self.view.setObjectName("logView")
        self.view.setReadOnly(True)
        self.view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.view.setPlainText(tail.text)
        self.view.moveCursor(QTextCursor.MoveOperation.End)
        self.view.setVisible(bool(tail.text))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.note)
        layout.addWidget(self.view, 1)
        layout.addWidget(buttons)
