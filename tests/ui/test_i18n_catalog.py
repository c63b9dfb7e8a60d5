"""One English text, one translation, whichever module registers it first."""

from __future__ import annotations

import pytest

from domi_desktop.ui import i18n


def test_a_second_different_translation_of_a_text_is_refused() -> None:
    i18n.register("zh", {"a text only this test uses": "甲"})
    i18n.register("zh", {"a text only this test uses": "甲"})  # the same again: fine
    with pytest.raises(ValueError, match="already translated as '甲', not '乙'"):
        i18n.register("zh", {"a text only this test uses": "乙"})
