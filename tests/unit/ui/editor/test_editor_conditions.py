"""The editor's Conditions box: its sentence follows the boxes, a save round-trips the conditions
through the service, and the sleep panel's "Woke on battery" says the run waits for the charger."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import (
    QAbstractButton,
    QCheckBox,
    QComboBox,
    QLabel,
    QLineEdit,
    QSpinBox,
    QWidget,
)
from pytestqt.qtbot import QtBot

from domi_desktop.frontdoor.service import Service
from domi_desktop.frontdoor.wire import parse_policies
from domi_desktop.model import Conditions, OnDeadline
from domi_desktop.store import Store
from domi_desktop.ui import i18n
from domi_desktop.ui.editor.dialog import EditorDialog
from domi_desktop.ui.editor.sleep import Scenario
from tests.support.fakes import FakeClock

NOW = datetime(2024, 3, 5, 12, 0, tzinfo=UTC)


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


@pytest.fixture(autouse=True)
def os_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "Europe/Riga")


def editor(qtbot: QtBot, service: Service, **options: Any) -> EditorDialog:
    dialog = EditorDialog(service, now=lambda: NOW, **options)
    qtbot.addWidget(dialog)
    return dialog


def child(root: QWidget, kind: type[Any], name: str) -> Any:
    found = root.findChild(kind, name)
    assert found is not None, f"no {kind.__name__} named {name!r}"
    return found


def sentence(dialog: EditorDialog) -> str:
    return str(child(dialog, QLabel, "conditionsSentence").text())


def wait_for_charger(dialog: EditorDialog, hours: int = 6) -> None:
    child(dialog, QCheckBox, "onAcPower").setChecked(True)
    child(dialog, QSpinBox, "waitHours").setValue(hours)


def test_it_says_the_run_waits_for_nothing_until_a_box_is_ticked(
    qtbot: QtBot, service: Service
) -> None:
    dialog = editor(qtbot, service)
    assert sentence(dialog) == "Runs as soon as it is due."
    wait_for_charger(dialog)
    assert sentence(dialog) == "Waits for the charger, at most 6 hours, then runs anyway."
    deadline: QComboBox = child(dialog, QComboBox, "onDeadline")
    deadline.setCurrentIndex(deadline.findData("skip"))
    assert sentence(dialog) == "Waits for the charger, at most 6 hours, then skips the run."
    child(dialog, QCheckBox, "onAcPower").setChecked(False)
    child(dialog, QSpinBox, "waitHours").setValue(0)
    assert sentence(dialog) == "Runs as soon as it is due."


def test_the_network_default_follows_the_action_kind(qtbot: QtBot, service: Service) -> None:
    dialog = editor(qtbot, service)
    assert "network" not in sentence(dialog)
    child(dialog, QAbstractButton, "kindHttp").setChecked(True)
    assert sentence(dialog).startswith("Waits for the network")
    network: QComboBox = child(dialog, QComboBox, "requiresNetwork")
    network.setCurrentIndex(network.findData(False))
    assert sentence(dialog) == "Runs as soon as it is due."


def test_unmetered_only_with_an_allowance_is_said_and_greyed_out_without_it(
    qtbot: QtBot, service: Service
) -> None:
    dialog = editor(qtbot, service)
    after: QSpinBox = child(dialog, QSpinBox, "meteredAfter")
    assert not after.isEnabled()
    child(dialog, QCheckBox, "unmeteredOnly").setChecked(True)
    assert after.isEnabled()
    after.setValue(3)
    assert "an unmetered network (or a metered one after 3 days" in sentence(dialog)


def test_a_save_round_trips_the_conditions_through_the_service(
    qtbot: QtBot, service: Service
) -> None:
    dialog = editor(qtbot, service)
    child(dialog, QLineEdit, "name").setText("Backup")
    child(dialog, QLineEdit, "command").setText("backup --all")
    network: QComboBox = child(dialog, QComboBox, "requiresNetwork")
    network.setCurrentIndex(network.findData(True))
    child(dialog, QCheckBox, "unmeteredOnly").setChecked(True)
    child(dialog, QSpinBox, "meteredAfter").setValue(2)
    child(dialog, QSpinBox, "minBattery").setValue(30)
    child(dialog, QSpinBox, "waitHours").setValue(1)
    child(dialog, QSpinBox, "waitMinutes").setValue(30)
    deadline: QComboBox = child(dialog, QComboBox, "onDeadline")
    deadline.setCurrentIndex(deadline.findData("skip"))
    child(dialog, QCheckBox, "stopIfLost").setChecked(True)
    child(dialog, QCheckBox, "keepAwake").setChecked(True)
    with qtbot.waitSignal(dialog.saved) as saved:
        child(dialog, QAbstractButton, "save").click()
    stored = service.get_schedule({"id": saved.args[0]})
    expected = Conditions(
        requires_network=True,
        unmetered_only=True,
        metered_after=timedelta(days=2),
        min_battery_percent=30,
        wait_at_most=timedelta(hours=1, minutes=30),
        on_deadline=OnDeadline.skip,
        stop_if_lost=True,
        keep_awake=True,
    )
    assert parse_policies(stored["policies"]).conditions == expected

    again = editor(qtbot, service, schedule_id=saved.args[0])
    assert child(again, QSpinBox, "waitMinutes").value() == 30
    assert child(again, QSpinBox, "minBattery").value() == 30
    assert not again.has_edits()
    child(again, QCheckBox, "unmeteredOnly").setChecked(False)
    child(again, QSpinBox, "minBattery").setValue(0)
    child(again, QSpinBox, "waitHours").setValue(0)
    child(again, QSpinBox, "waitMinutes").setValue(0)
    for name in ("stopIfLost", "keepAwake"):
        child(again, QCheckBox, name).setChecked(False)
    network = child(again, QComboBox, "requiresNetwork")
    network.setCurrentIndex(network.findData(None))
    with qtbot.waitSignal(again.saved):
        child(again, QAbstractButton, "save").click()
    cleared = service.get_schedule({"id": saved.args[0]})["policies"]
    assert parse_policies(cleared).conditions == Conditions()


def test_in_chinese_the_sentence_uses_full_width_punctuation(
    qtbot: QtBot, service: Service
) -> None:
    i18n.set_language("zh")
    i18n.reset_missing()
    dialog = editor(qtbot, service)
    wait_for_charger(dialog)
    text = sentence(dialog)
    assert text == "等待充电器，最多 6 小时，之后照常运行。"
    assert not {",", ".", ";", ":"} & set(text)
    result = on_battery(dialog)[0]
    assert result == "暂不运行：正在等待充电器。"
    assert i18n.missing() == set()


def on_battery(dialog: EditorDialog) -> tuple[str, str]:
    combo: QComboBox = child(dialog, QComboBox, "simulateScenario")
    combo.setCurrentIndex(combo.findData(Scenario.on_battery.name))
    return (
        str(child(dialog, QLabel, "simulateResult").text()),
        str(child(dialog, QLabel, "simulateDetails").text()),
    )


def test_woke_on_battery_says_the_run_waits_for_the_charger(qtbot: QtBot, service: Service) -> None:
    dialog = editor(qtbot, service)
    result, _ = on_battery(dialog)
    assert result == "Runs once, on time."  # no conditions: the battery changes nothing
    wait_for_charger(dialog)
    result, details = on_battery(dialog)
    assert result == "Does not run yet: waiting for the charger."
    assert "wakes at Wed 03-06 09:00:30, unplugged, with the battery at 40 %" in details
    assert (
        "Wed 03-06 09:00:30: the run due Wed 03-06 09:00 waits: waiting for the charger." in details
    )
    assert "Wed 03-06 15:00: still on battery: ran anyway after waiting 6 hours" in details
    child(dialog, QSpinBox, "waitHours").setValue(0)
    _, details = on_battery(dialog)
    assert "It starts as soon as the charger is plugged in." in details
