"""History says the window's and the away's reasons in the app's language."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from domi_desktop.ui import i18n
from domi_desktop.ui.history.texts import reason_words


@pytest.fixture
def chinese() -> Iterator[None]:
    i18n.set_language("zh")
    yield
    i18n.set_language("en")


@pytest.mark.parametrize(
    ("recorded", "said"),
    [
        ("waiting for you to step away", "等待你离开电脑"),
        ("waiting for the window 22:00-06:00", "等待时段 22:00-06:00"),
        ("outside the window 22:00-06:00", "不在时段 22:00-06:00 内"),
        ("asleep 21:40-07:10", "睡眠 21:40-07:10"),
        ("on battery the whole window", "整个时段都在用电池"),
    ],
)
def test_the_reasons_of_windows_and_aways_are_translated(
    chinese: None, recorded: str, said: str
) -> None:
    assert reason_words(recorded) == said
    assert not i18n.missing()
