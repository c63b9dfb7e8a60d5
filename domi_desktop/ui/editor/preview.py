"""The editor's "Next 10 runs": the fires of the expression as edited, in the schedule's zone and,
when it differs, on this computer's clock; days on which the clocks change are marked."""

from __future__ import annotations

from datetime import datetime, tzinfo
from itertools import islice

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGroupBox,
    QHeaderView,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from domi_desktop.cron import LOCAL, CronExpr, upcoming, zone_for
from domi_desktop.platform.timezone import local_zone_name
from domi_desktop.timefmt import transition_day
from domi_desktop.ui.i18n import Texts, format_moment, register, tr
from domi_desktop.ui.palette import colors

PREVIEW_COUNT = 10


class PreviewBox(QGroupBox):
    def __init__(self, texts: Texts) -> None:
        super().__init__()
        texts.bind(self.setTitle, "Next {count} runs", count=PREVIEW_COUNT)
        self.table = QTableWidget(PREVIEW_COUNT, 1)
        table = self.table
        table.setObjectName("preview")
        texts.bind(table.setAccessibleName, "Next runs")
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        table.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        table.verticalHeader().setVisible(False)
        table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        table.setAlternatingRowColors(True)
        table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        table.setFixedHeight(
            table.horizontalHeader().sizeHint().height()
            + PREVIEW_COUNT * table.verticalHeader().defaultSectionSize()
            + 2 * table.frameWidth()
        )
        QVBoxLayout(self).addWidget(table)
        self.skipping: datetime | None = None
        """The due the user asked to skip ("Skip next"), said in its row."""

    def show_fires(self, expr: CronExpr | None, tz: str | None, label: str, now: datetime) -> None:
        """The next fires after ``now`` (none when ``expr`` or ``tz`` is invalid); ``label``
        heads the schedule's column. Cron only: it runs on every keystroke."""
        fires: list[datetime] = []
        if expr is not None and tz is not None:
            fires = list(islice(upcoming(expr, now, tz), PREVIEW_COUNT))
        os_name = local_zone_name()
        headers = [label or tr("Time zone")]
        zones: list[tzinfo | None] = [None]  # None: as upcoming gave it, in the schedule's zone
        if tz is not None and tz not in (LOCAL, os_name):
            headers.append(tr("This computer ({zone})", zone=os_name or tr("local time")))
            zones.append(zone_for(LOCAL))
        self.table.setColumnCount(len(headers))
        self.table.setHorizontalHeaderLabels(headers)
        for index in range(PREVIEW_COUNT):
            for column, zone_of_column in enumerate(zones):
                if index >= len(fires):
                    self.table.setItem(index, column, QTableWidgetItem())
                    continue
                fire = fires[index]
                moment = fire if zone_of_column is None else fire.astimezone(zone_of_column)
                item = _fire_item(moment)
                if fire == self.skipping:
                    item.setText(tr("skipping {when}", when=item.text()))
                self.table.setItem(index, column, item)


def _fire_item(moment: datetime) -> QTableWidgetItem:
    text = f"{format_moment(moment, year=True)} {moment.tzname() or ''}".rstrip()
    item = QTableWidgetItem(text)
    item.setData(Qt.ItemDataRole.UserRole, moment.isoformat())
    if transition_day(moment):
        item.setText(f"{text}  {tr('DST')}")
        item.setForeground(colors().dst)
        item.setToolTip(
            tr(
                "The clocks change on this day (daylight saving time); cron's rules decide the run time."
            )
        )
    return item


register(
    "zh",
    {
        "Next runs": "接下来的运行",
        "skipping {when}": "跳过 {when}",
        "Next {count} runs": "接下来的 {count} 次运行",
        "Time zone": "时区",
        "This computer ({zone})": "本机（{zone}）",
        "local time": "本地时间",
        "DST": "夏令时",
        "The clocks change on this day (daylight saving time); cron's rules decide the run time.": (
            "这一天时钟会调整（夏令时）；运行时间按 cron 的规则确定。"
        ),
    },
)
