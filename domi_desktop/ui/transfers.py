"""The Schedules window's files: its schedules exported and imported (JSON, secrets by name
only), a crontab imported with its bad lines named, and the data folder shown."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QProcess, Qt, QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from domi_desktop.errors import DomiError
from domi_desktop.frontdoor.service import Service
from domi_desktop.model import Schedule
from domi_desktop.ui.i18n import register, tr

register(
    "zh",
    {
        "Export schedules": "导出计划",
        "Import schedules": "导入计划",
        "Schedules (*.json)": "计划文件 (*.json)",
        "Exported {count} schedules to {path}.": "已导出 {count} 个计划到 {path}。",
        "Exported 1 schedule to {path}.": "已导出 1 个计划到 {path}。",
        "Imported {count} schedules.": "已导入 {count} 个计划。",
        "Imported 1 schedule.": "已导入 1 个计划。",
        "Import a crontab": "导入 crontab",
        "Lines not imported:": "未导入的行：",
        "The data folder is {path}": "数据文件夹位于 {path}",
        "No program opened it; the path is copied to the clipboard.": (
            "没有程序能打开它；路径已复制到剪贴板。"
        ),
        "Data folder": "数据文件夹",
        "Cannot read {path}: {reason}": "无法读取 {path}：{reason}",
    },
)


def imported_text(count: int) -> str:
    if count == 1:
        return tr("Imported 1 schedule.")
    return tr("Imported {count} schedules.", count=count)


class Transfers:
    def __init__(
        self,
        window: QWidget,
        service: Service,
        data_dir: Path,
        selected: Callable[[], list[Schedule]],
        changed: Callable[[int], None],
        say: Callable[[str, int], None],
    ) -> None:
        """``selected`` the window's chosen schedules; ``changed`` shows a new one; ``say``
        writes the status bar."""
        self._window = window
        self._service = service
        self._data_dir = data_dir
        self._selected = selected
        self._changed = changed
        self._say = say

    def export_to(self, path: Path, ids: list[int] | None = None) -> int:
        """The export document (JSON, secrets by name only) of ``ids`` (all when None)."""
        document = self._service.export({} if ids is None else {"ids": ids})
        text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
        path.write_text(text, encoding="utf-8")
        return len(document.get("schedules", []))

    def import_from(self, path: Path) -> list[int]:
        """Create the schedules of an export file, all or none; raises ``DomiError``/``OSError``."""
        document = json.loads(path.read_text(encoding="utf-8"))
        created: list[int] = self._service.import_({"document": document})["created"]
        for schedule_id in created:
            self._changed(schedule_id)
        return created

    def export_dialog(self) -> None:
        chosen = [schedule.id for schedule in self._selected()]
        name, _filter = QFileDialog.getSaveFileName(
            self._window, tr("Export schedules"), str(Path.home() / "schedules.json"),
            tr("Schedules (*.json)"),
        )  # fmt: skip
        if not name:
            return
        try:
            count = self.export_to(Path(name), chosen if len(chosen) > 1 else None)
        except (DomiError, OSError) as error:
            QMessageBox.warning(self._window, tr("Export schedules"), str(error))
            return
        text = (
            tr("Exported 1 schedule to {path}.", path=name)
            if count == 1
            else tr("Exported {count} schedules to {path}.", count=count, path=name)
        )
        self._say(text, 10_000)

    def import_dialog(self) -> None:
        name, _filter = QFileDialog.getOpenFileName(
            self._window, tr("Import schedules"), str(Path.home()), tr("Schedules (*.json)")
        )
        if not name:
            return
        try:
            created = self.import_from(Path(name))
        except (DomiError, OSError, ValueError) as error:
            text = tr("Cannot read {path}: {reason}", path=name, reason=str(error))
            QMessageBox.warning(self._window, tr("Import schedules"), text)
            return
        self._say(imported_text(len(created)), 10_000)

    def import_crontab_from(self, path: Path) -> tuple[list[int], list[str]]:
        """A schedule for each entry of a crontab file; returns the new ids and the problems
        (one line each: "line 3: ..."). Raises ``DomiError``/``OSError``/``UnicodeError``."""
        from domi_desktop.crontab import read_crontab, to_action
        from domi_desktop.frontdoor.triggers import imported_policies
        from domi_desktop.frontdoor.wire import action_json

        table = read_crontab(path.read_text(encoding="utf-8"))
        problems = [f"{problem.line}: {problem.message}" for problem in table.problems]
        created: list[int] = []
        for entry in table.entries:
            params = {"name": entry.name, "expr": entry.expr, "tz": entry.tz or "local",
                      "action": action_json(to_action(entry)),
                      **imported_policies(entry.at_login)}  # fmt: skip
            try:
                schedule_id = int(self._service.create_schedule(params)["id"])
            except DomiError as error:
                problems.append(f"{entry.line}: {error}")
                continue
            created.append(schedule_id)
            self._changed(schedule_id)
        return created, problems

    def crontab_dialog(self) -> None:
        name, _filter = QFileDialog.getOpenFileName(
            self._window, tr("Import a crontab"), str(Path.home())
        )
        if not name:
            return
        try:
            created, problems = self.import_crontab_from(Path(name))
        except (DomiError, OSError, UnicodeError) as error:
            text = tr("Cannot read {path}: {reason}", path=name, reason=str(error))
            QMessageBox.warning(self._window, tr("Import a crontab"), text)
            return
        if problems:
            box = QMessageBox(
                QMessageBox.Icon.Warning, tr("Import a crontab"), imported_text(len(created)),
                QMessageBox.StandardButton.Ok, self._window,
            )  # fmt: skip
            box.setInformativeText(tr("Lines not imported:") + "\n" + "\n".join(problems[:20]))
            box.open()
        self._say(imported_text(len(created)), 10_000)

    def open_data_folder(self) -> bool:
        """Show the data folder in the file manager; when none opens it, say where it is.

        On Linux and the BSDs Qt hands the folder to ``xdg-open`` and calls it opened once that
        started, whatever it then found: ``xdg-open`` is run here and its exit status heard."""
        path = str(self._data_dir)
        opener = shutil.which("xdg-open") if sys.platform not in ("win32", "darwin") else None
        if opener is not None:
            process = QProcess(self._window)
            process.setProgram(opener)
            process.setArguments([path])
            process.finished.connect(lambda code, _status: self._opened(process, code == 0))
            process.errorOccurred.connect(lambda _error: self._opened(process, False))
            process.start()
            return True
        if QDesktopServices.openUrl(QUrl.fromLocalFile(path)):
            return True
        self._say_where(path)
        return False

    def _opened(self, process: QProcess, opened: bool) -> None:
        if process.property("told"):
            return  # a failed start reports an error and, on some platforms, a finish too
        process.setProperty("told", True)
        process.deleteLater()
        if not opened:
            self._say_where(process.arguments()[0])

    def _say_where(self, path: str) -> None:
        QGuiApplication.clipboard().setText(path)
        box = QMessageBox(QMessageBox.Icon.Information, tr("Data folder"),
                          tr("The data folder is {path}", path=path),
                          QMessageBox.StandardButton.Ok, self._window)  # fmt: skip
        box.setObjectName("dataFolder")
        box.setInformativeText(tr("No program opened it; the path is copied to the clipboard."))
        box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        box.open()
        self._say(tr("The data folder is {path}", path=path), 30_000)
