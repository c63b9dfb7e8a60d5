"""How the editor behaves for a person at the keyboard: focus, Tab, Escape, secrets created in
place, the time picker, a language change while it is open, and its size on a small screen."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt, QTime
from PySide6.QtGui import QKeySequence, QWheelEvent
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QComboBox,
    QDialogButtonBox,
    QGroupBox,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QSpinBox,
    QTimeEdit,
    QWidget,
)
from pytestqt.qtbot import QtBot

from domi_desktop.frontdoor.service import Service
from domi_desktop.secrets import MemorySecretStore
from domi_desktop.store import Store
from domi_desktop.ui import i18n
from domi_desktop.ui.editor.dialog import EditorDialog
from domi_desktop.ui.editor.secret import NewSecretDialog
from domi_desktop.ui.editor.widgets import PairsTable, time_of, with_time
from tests.support.fakes import FakeClock

NOW = datetime(2024, 3, 5, 12, 0, tzinfo=UTC)
SECRET_VALUE = "a-new-token-typed-once"
ROOT = Path(__file__).resolve().parents[4]


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    store = Store.open(tmp_path / "data", now=NOW)
    yield Service(store, FakeClock(NOW))
    store.close()


@pytest.fixture(autouse=True)
def english() -> Iterator[None]:
    i18n.set_language("en")
    yield
    i18n.set_language("en")


class Asked:
    """A stand-in for the "discard the changes?" question: records it, answers ``answer``."""

    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.times = 0

    def __call__(self, _parent: QWidget) -> bool:
        self.times += 1
        return self.answer


def editor(qtbot: QtBot, service: Service, **options: Any) -> EditorDialog:
    options.setdefault("now", lambda: NOW)
    dialog = EditorDialog(service, **options)
    qtbot.addWidget(dialog)
    return dialog


def child(root: QWidget, kind: type[Any], name: str) -> Any:
    found = root.findChild(kind, name)
    assert found is not None, f"no {kind.__name__} named {name!r}"
    return found


def test_it_opens_with_the_name_focused(qtbot: QtBot, service: Service) -> None:
    dialog = editor(qtbot, service)
    dialog.show()
    qtbot.waitExposed(dialog)
    assert dialog.focusWidget() is child(dialog, QLineEdit, "name")


def test_tab_leaves_the_input_box_and_leaves_its_text_alone(qtbot: QtBot, service: Service) -> None:
    dialog = editor(qtbot, service)
    dialog.show()
    qtbot.waitExposed(dialog)
    stdin: QPlainTextEdit = child(dialog, QPlainTextEdit, "stdin")
    stdin.setPlainText("yes")
    stdin.setFocus()
    qtbot.keyClick(stdin, Qt.Key.Key_Tab)
    assert stdin.toPlainText() == "yes"
    assert dialog.focusWidget() is not stdin
    body: QPlainTextEdit = child(dialog, QPlainTextEdit, "httpBody")
    assert body.tabChangesFocus()
    for table in dialog.findChildren(PairsTable):
        assert not table.table.tabKeyNavigation()


def test_escape_with_edits_asks_and_keeping_them_keeps_the_dialog(
    qtbot: QtBot, service: Service
) -> None:
    keep = Asked(answer=False)
    dialog = editor(qtbot, service, confirm_discard=keep)
    dialog.show()
    qtbot.keyClicks(child(dialog, QLineEdit, "name"), "backup")
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    assert keep.times == 1
    assert dialog.isVisible()
    assert child(dialog, QLineEdit, "name").text() == "backup"
    discard = Asked(answer=True)
    dialog._confirm_discard = discard
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    assert discard.times == 1
    assert not dialog.isVisible()


def test_escape_without_edits_closes_without_asking(qtbot: QtBot, service: Service) -> None:
    asked = Asked(answer=False)
    dialog = editor(qtbot, service, confirm_discard=asked)
    dialog.show()
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    assert asked.times == 0
    assert not dialog.isVisible()


def test_the_default_question_keeps_the_edits_unless_discard_is_clicked(
    qtbot: QtBot, service: Service
) -> None:
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QMessageBox

    dialog = editor(qtbot, service)
    dialog.show()
    qtbot.keyClicks(child(dialog, QLineEdit, "name"), "backup")
    seen: list[str] = []

    def answer(label: str) -> None:
        box = QApplication.activeModalWidget()
        assert isinstance(box, QMessageBox)
        seen.append(box.text())
        button = next(b for b in box.buttons() if b.text() == label)
        button.click()

    QTimer.singleShot(0, lambda: answer("Keep editing"))
    dialog.reject()
    assert dialog.isVisible()
    QTimer.singleShot(0, lambda: answer("Discard changes"))
    dialog.reject()
    assert not dialog.isVisible()
    assert seen == ["Discard the changes to this schedule?"] * 2


def test_a_secret_created_in_the_editor_is_stored_and_never_shown_again(
    qtbot: QtBot, service: Service
) -> None:
    secrets = MemorySecretStore()
    dialog = editor(qtbot, service, secrets=secrets)
    dialog.show()
    create = child(
        dialog.findChild(QWidget, "secretEnv").parentWidget(), QAbstractButton, "newSecret"
    )
    create.click()
    asked = dialog.findChild(NewSecretDialog)
    assert asked is not None
    value = child(asked, QLineEdit, "secretValue")
    assert value.echoMode() is QLineEdit.EchoMode.Password
    qtbot.keyClicks(child(asked, QLineEdit, "secretName"), "API_TOKEN")
    qtbot.keyClicks(value, SECRET_VALUE)
    child(asked, QAbstractButton, "storeSecret").click()
    assert secrets.get("API_TOKEN") == SECRET_VALUE
    assert value.text() == ""
    table: PairsTable = child(dialog, PairsTable, "secretEnv")
    assert table.pairs() == [("API_TOKEN", "API_TOKEN")]
    shown = [w.text() for w in dialog.findChildren(QLineEdit)] + [
        w.text() for w in dialog.findChildren(QLabel)
    ]
    assert not any(SECRET_VALUE in text for text in shown)
    qtbot.keyClicks(child(dialog, QLineEdit, "name"), "report")
    qtbot.keyClicks(child(dialog, QLineEdit, "command"), "report")
    with qtbot.waitSignal(dialog.saved, timeout=1000) as saved:
        child(dialog, QAbstractButton, "save").click()
    stored = service.get_schedule({"id": saved.args[0]})
    assert stored["action"]["secret_env"] == {"API_TOKEN": "API_TOKEN"}
    assert SECRET_VALUE not in json.dumps(stored)


def test_a_secret_name_already_taken_is_refused_with_a_reason(qtbot: QtBot) -> None:
    secrets = MemorySecretStore({"API_TOKEN": "old-value-kept"})
    asked = NewSecretDialog(secrets)
    qtbot.addWidget(asked)
    asked.name.setText("API_TOKEN")
    asked.value.setText("new-value-refused")
    child(asked, QAbstractButton, "storeSecret").click()
    assert secrets.get("API_TOKEN") == "old-value-kept"
    assert asked.created is None
    assert "already exists" in child(asked, QLabel, "secretError").text()


def test_without_a_secret_store_the_editor_points_to_the_cli(
    qtbot: QtBot, service: Service
) -> None:
    dialog = editor(qtbot, service, secret_names=list)
    assert dialog.findChild(QAbstractButton, "newSecret") is None
    hints = [label.text() for label in dialog.findChildren(QLabel)]
    assert "No secrets stored yet. Add one with: domi-desktop secret set NAME" in hints


def test_the_time_picker_sets_the_time_and_keeps_the_days(qtbot: QtBot, service: Service) -> None:
    dialog = editor(qtbot, service)
    cron: QPlainTextEdit = child(dialog, QPlainTextEdit, "cron")
    presets: QComboBox = child(dialog, QComboBox, "presets")
    presets.setCurrentIndex(presets.findText("Weekdays at 09:00"))
    picker: QTimeEdit = child(dialog, QTimeEdit, "timePicker")
    assert picker.time() == QTime(9, 0)
    picker.setTime(QTime(14, 30))
    assert cron.toPlainText() == "30 14 * * 1-5"
    assert child(dialog, QLabel, "description").text() == "At 14:30, Monday through Friday"
    cron.setPlainText("0 7 * * *")
    assert picker.time() == QTime(7, 0)


def test_with_time_and_time_of_read_and_write_the_first_two_fields() -> None:
    assert with_time("*/5 * 1 * *", 8, 5) == "5 8 1 * *"
    assert with_time("0 9 *", 8, 5) == "5 8 * * *"
    assert time_of("30 14 * * 1-5") == (14, 30)
    assert time_of("*/5 * * * *") is None
    assert time_of("0 24 * * *") is None


def test_an_open_editor_speaks_the_new_language_at_once(qtbot: QtBot, service: Service) -> None:
    dialog = editor(qtbot, service)
    dialog.show()
    schedule_box = next(g for g in dialog.findChildren(QGroupBox) if g.title() == "Schedule")
    i18n.set_language("zh")
    assert dialog.windowTitle() == "新建计划"
    assert schedule_box.title() == "计划"
    assert child(dialog, QComboBox, "presets").itemText(1) == "每分钟"
    assert child(dialog, QLabel, "description").text() != "At 09:00"
    assert child(dialog, QLabel, "simulateResult").text() != "Runs once, on time."
    buttons = dialog.findChild(QDialogButtonBox)
    assert buttons is not None
    qtbot.waitUntil(lambda: child(dialog, QAbstractButton, "save").text() == "保存")
    cancel = buttons.button(QDialogButtonBox.StandardButton.Cancel)
    assert cancel.text() == "取消"
    i18n.set_language("en")
    assert dialog.windowTitle() == "New schedule"
    assert schedule_box.title() == "Schedule"
    qtbot.waitUntil(lambda: cancel.text() == "Cancel")


GEOMETRY = """
import json, sys
from datetime import UTC, datetime
from pathlib import Path
from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QAbstractButton, QApplication
app = QApplication([])
from domi_desktop.platform.timezone import install_os_zone
install_os_zone()
from domi_desktop.frontdoor.service import Service
from domi_desktop.store import Store
from domi_desktop.ui.editor.dialog import EditorDialog
from tests.support.fakes import FakeClock
now = datetime(2024, 3, 5, 12, 0, tzinfo=UTC)
with Store.open(Path(sys.argv[1]), now=now) as store:
    dialog = EditorDialog(Service(store, FakeClock(now)), secret_names=list)
    dialog.show()
    app.processEvents()
    save = dialog.findChild(QAbstractButton, "save")
    top_left = save.mapToGlobal(QPoint(0, 0))
    screen = dialog.screen()
    print(json.dumps({
        "save": [top_left.x(), top_left.y(), save.width(), save.height()],
        "save_visible": save.isVisible(),
        "frame": [dialog.frameGeometry().x(), dialog.frameGeometry().y(),
                  dialog.frameGeometry().width(), dialog.frameGeometry().height()],
        "screen": [screen.availableGeometry().x(), screen.availableGeometry().y(),
                   screen.availableGeometry().width(), screen.availableGeometry().height()],
        "ratio": screen.devicePixelRatio(),
    }))
"""


def test_at_scale_2_on_a_1600x1000_screen_save_stays_on_screen(tmp_path: Path) -> None:
    screens = tmp_path / "screens.json"
    screens.write_text(
        json.dumps(
            {
                "screens": [
                    {
                        "name": "laptop",
                        "x": 0,
                        "y": 0,
                        "width": 1600,
                        "height": 1000,
                        "logicalDpi": 96,
                        "logicalBaseDpi": 96,
                        "dpr": 1,
                    }
                ]
            }
        )
    )
    env = {
        **os.environ,
        # Relative, from the child's working directory: the platform's options are split at
        # colons, a Windows drive letter's too.
        "QT_QPA_PLATFORM": f"offscreen:configfile={screens.name}",
        "QT_SCALE_FACTOR": "2",
        "TZ": "Europe/Riga",
        "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]),
    }
    done = subprocess.run(
        [sys.executable, "-c", GEOMETRY, str(tmp_path / "data")],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["ratio"] == 2.0
    assert found["screen"] == [0, 0, 800, 500]  # 1600x1000 pixels at scale 2
    x, y, width, height = found["save"]
    assert found["save_visible"]
    assert x >= 0 and x + width <= 800 and y >= 0 and y + height <= 500, found
    fx, fy, fwidth, fheight = found["frame"]
    assert fx >= 0 and fx + fwidth <= 800 and fy >= 0 and fy + fheight <= 500, found


def wheel(widget: QWidget, notches: int) -> None:
    """``notches`` turns of the wheel over the middle of ``widget``: down when positive."""
    middle = QPointF(widget.rect().center())
    for _ in range(abs(notches)):
        down = -120 if notches > 0 else 120
        event = QWheelEvent(
            middle, QPointF(widget.mapToGlobal(middle)), QPoint(0, 0), QPoint(0, down),
            Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
            Qt.ScrollPhase.NoScrollPhase, False,
        )  # fmt: skip
        QApplication.sendEvent(widget, event)


def test_the_wheel_over_an_unfocused_combo_or_spin_box_scrolls_the_form_not_the_value(
    qtbot: QtBot, service: Service
) -> None:
    dialog = editor(qtbot, service, confirm_discard=Asked(answer=True))
    dialog.resize(480, 360)  # the form scrolls
    dialog.show()
    qtbot.waitExposed(dialog)
    overlap: QComboBox = child(dialog, QComboBox, "overlap")
    timeout: QSpinBox = child(dialog, QSpinBox, "timeout")
    bar = dialog.form_area.verticalScrollBar()
    before = (overlap.currentData(), timeout.value())
    wheel(overlap, 10)
    wheel(timeout, 3)
    assert (overlap.currentData(), timeout.value()) == before
    assert bar.value() > 0  # the notches scrolled the form instead
    assert not dialog.has_edits()

    timeout.setFocus()
    qtbot.waitUntil(timeout.hasFocus)
    wheel(timeout, -3)  # with the focus, the wheel is the box's
    assert timeout.value() == 3


@pytest.mark.parametrize("keys", ["Ctrl+S", "Ctrl+Return", "Ctrl+Enter"])
def test_ctrl_s_and_ctrl_enter_save(qtbot: QtBot, service: Service, keys: str) -> None:
    dialog = editor(qtbot, service, confirm_discard=Asked(answer=True))
    dialog.show()
    dialog.windowHandle().requestActivate()  # a shortcut belongs to the active window
    qtbot.waitUntil(lambda: QApplication.activeWindow() is dialog)
    qtbot.keyClicks(child(dialog, QLineEdit, "name"), "report")
    qtbot.keyClicks(child(dialog, QLineEdit, "command"), "report")
    cron: QPlainTextEdit = child(dialog, QPlainTextEdit, "cron")
    cron.setFocus()  # even from the multi-line fields
    sequence = QKeySequence(keys)[0]
    with qtbot.waitSignal(dialog.saved, timeout=5000) as saved:
        qtbot.keyClick(cron, sequence.key(), sequence.keyboardModifiers())
    assert service.get_schedule({"id": saved.args[0]})["name"] == "report"
    assert not dialog.isVisible()


def test_a_picked_secret_proposes_an_upper_case_variable_name(
    qtbot: QtBot, service: Service
) -> None:
    secrets = MemorySecretStore({"api-token": "value-1", "2fa.seed": "value-2"})
    dialog = editor(qtbot, service, secrets=secrets, confirm_discard=Asked(answer=True))
    table: PairsTable = child(dialog, PairsTable, "secretEnv")
    for name in ("api-token", "2fa.seed"):
        table.add_row()
        combo = table.table.cellWidget(table.table.rowCount() - 1, 1)
        assert isinstance(combo, QComboBox)
        combo.setCurrentIndex(combo.findData(name))
    assert table.pairs() == [("API_TOKEN", "api-token"), ("_2FA_SEED", "2fa.seed")]
    for variable, _secret in table.pairs():
        assert re.fullmatch(r"[A-Z_][A-Z0-9_]*", variable)


def test_a_secret_created_in_the_editor_gets_a_valid_variable_name(
    qtbot: QtBot, service: Service
) -> None:
    secrets = MemorySecretStore()
    dialog = editor(qtbot, service, secrets=secrets, confirm_discard=Asked(answer=True))
    secrets.set("github-token", "value-1")
    dialog.action._secret_created(child(dialog, PairsTable, "secretEnv"), "github-token")
    assert child(dialog, PairsTable, "secretEnv").pairs() == [("GITHUB_TOKEN", "github-token")]


@pytest.mark.parametrize(
    ("expr", "shown"),
    [
        ("0 3 * * *", "Daily at 03:00"),
        ("30 17 * * 1-5", "Weekdays at 17:30"),
        ("0 9 * * 1", "Weekly on Monday at 09:00"),
        ("15 6 1 * *", "Monthly on the 1st at 06:15"),
        ("*/5 * * * *", "Every 5 minutes"),
        ("0 3 * * 2", "Custom"),
    ],
)
def test_a_preset_is_recognised_at_any_time_of_day(
    qtbot: QtBot, service: Service, expr: str, shown: str
) -> None:
    dialog = editor(qtbot, service, confirm_discard=Asked(answer=True))
    cron: QPlainTextEdit = child(dialog, QPlainTextEdit, "cron")
    cron.setPlainText(expr)
    assert child(dialog, QComboBox, "presets").currentText() == shown


def test_choosing_a_preset_keeps_the_time_of_day(qtbot: QtBot, service: Service) -> None:
    dialog = editor(qtbot, service, confirm_discard=Asked(answer=True))
    cron: QPlainTextEdit = child(dialog, QPlainTextEdit, "cron")
    cron.setPlainText("0 3 * * *")
    presets: QComboBox = child(dialog, QComboBox, "presets")
    presets.setCurrentIndex(presets.findText("Weekdays at 03:00"))
    assert cron.toPlainText() == "0 3 * * 1-5"


def test_alerts_are_set_in_the_editor_and_saved_with_the_schedule(
    qtbot: QtBot, service: Service
) -> None:
    dialog = editor(qtbot, service, confirm_discard=Asked(answer=True))
    qtbot.keyClicks(child(dialog, QLineEdit, "name"), "report")
    qtbot.keyClicks(child(dialog, QLineEdit, "command"), "report")
    assert dialog._collect().request["policies"].get("alerts") is None  # the app's defaults
    child(dialog, QSpinBox, "autoPauseAfter").setValue(5)
    child(dialog, QSpinBox, "notifyEvery").setValue(3)
    child(dialog, QSpinBox, "staleAfter").setValue(48)
    with qtbot.waitSignal(dialog.saved, timeout=5000) as saved:
        child(dialog, QAbstractButton, "save").click()
    alerts = service.get_schedule({"id": saved.args[0]})["policies"]["alerts"]
    assert (alerts["auto_pause_after"], alerts["notify_every"], alerts["stale_after"]) == (
        5, 3, 48 * 3600,
    )  # fmt: skip
    again = editor(qtbot, service, schedule_id=saved.args[0])
    assert child(again, QSpinBox, "autoPauseAfter").value() == 5
    assert child(again, QSpinBox, "staleAfter").value() == 48
    assert not again.has_edits()
