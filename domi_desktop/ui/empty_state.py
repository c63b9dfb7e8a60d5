"""What the Schedules window shows in place of its rows before the first schedule: the two ways
to one ("No schedules yet: New… or Import a crontab…"), as links."""

from __future__ import annotations

import html
from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from domi_desktop.ui.i18n import tr
from domi_desktop.ui.schedule_model import ScheduleModel


class EmptyState(QLabel):
    def __init__(
        self,
        model: ScheduleModel,
        viewport: QWidget,
        new: Callable[[], None],
        crontab: Callable[[], None],
    ) -> None:
        super().__init__(viewport)
        self._model = model
        self.setObjectName("emptyState")
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.RichText)
        self.linkActivated.connect(lambda link: new() if link == "new" else crontab())
        QVBoxLayout(viewport).addWidget(self)
        self.hide()
        for signal in (model.rowsInserted, model.rowsRemoved, model.modelReset):
            signal.connect(self.update_shown)

    def update_shown(self, *_changed: object) -> None:
        empty = self._model.loaded and self._model.rowCount() == 0
        if empty:
            self.setText(
                tr(
                    "No schedules yet: {new} or {crontab}",
                    new=f'<a href="new">{html.escape(tr("New…"))}</a>',
                    crontab=f'<a href="crontab">{html.escape(tr("Import a crontab…"))}</a>',
                )
            )
        self.setVisible(empty)
