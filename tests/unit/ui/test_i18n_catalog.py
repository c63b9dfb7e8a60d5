"""One English text, one translation, whichever module registers it first."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from domi_desktop.cron import set_local_resolver
from domi_desktop.ui import i18n
from domi_desktop.ui.history.texts import reason_words
from domi_desktop.ui.i18n import person_time, zone_name


def test_a_second_different_translation_of_a_text_is_refused() -> None:
    i18n.register("zh", {"a text only this test uses": "甲"})
    i18n.register("zh", {"a text only this test uses": "甲"})  # the same again: fine
    with pytest.raises(ValueError, match="already translated as '甲', not '乙'"):
        i18n.register("zh", {"a text only this test uses": "乙"})


def test_error_reasons_and_zone_names_speak_chinese() -> None:
    set_local_resolver(lambda: ZoneInfo("Europe/Riga"))  # another clock than Shanghai's
    i18n.set_language("zh")
    try:
        i18n.reset_missing()
        assert reason_words("exit code 3") == "退出码 3"
        assert reason_words("killed by signal 9 (SIGKILL)") == "被信号 9（SIGKILL）终止"
        assert reason_words("waiting for the charger") == "正在等待充电器"
        assert reason_words("missed") == "睡眠中错过"
        assert reason_words("my script: no such file") == "my script: no such file"  # the job's
        assert zone_name("America/New_York") == "纽约"
        assert zone_name("America/Argentina/Ushuaia") == "Ushuaia"  # no name for it: as it is
        moment = datetime(2024, 3, 5, 14, 0, tzinfo=UTC)
        assert person_time(moment, "Asia/Shanghai").endswith("上海)")
        assert i18n.missing() == set()
    finally:
        i18n.set_language("en")
        set_local_resolver(None)
    assert zone_name("America/New_York") == "New York"
