"""The resource conditions and session triggers in the windows' words, in English and Chinese."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from domi_desktop.model import Trigger
from domi_desktop.ui import i18n
from domi_desktop.ui.history.texts import TRIGGER_LABELS, reason_words


@pytest.fixture
def chinese() -> Iterator[None]:
    i18n.set_language("zh")
    i18n.reset_missing()
    yield
    i18n.set_language("en")


def test_every_trigger_has_a_label() -> None:
    assert set(TRIGGER_LABELS) == set(Trigger)


def test_the_waits_read_in_english_as_recorded() -> None:
    assert reason_words("waiting for the disk Backup") == "waiting for the disk Backup"
    assert reason_words("waiting for the office network") == "waiting for the office network"


def test_the_waits_and_triggers_speak_chinese(chinese: None) -> None:
    assert reason_words("waiting for the disk Backup") == "正在等待磁盘 Backup"
    assert reason_words("waiting for the office network") == "正在等待网络 office"
    assert reason_words("waiting for a wired network") == "正在等待有线网络"
    assert [i18n.tr(TRIGGER_LABELS[t]) for t in (Trigger.login, Trigger.before_sleep)] == [
        "登录时",
        "睡眠前",
    ]
    assert i18n.missing() == set()
