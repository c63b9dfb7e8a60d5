"""The app's words for its notifications: alerts and catch-up bursts, in English and Chinese,
from the values the scheduler decides (one catalog: the UI's ``tr()``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

import pytest

from domi_desktop.scheduler.alerts import AlertNotice, NoticeKind
from domi_desktop.ui import i18n
from domi_desktop.ui.notices import alert_texts, burst_text, span_words


@contextmanager
def chinese() -> Iterator[None]:
    i18n.set_language("zh")
    try:
        yield
    finally:
        i18n.set_language("en")


@pytest.mark.parametrize(
    ("notice", "en", "zh"),
    [
        (
            AlertNotice(NoticeKind.recovered, failures=3),
            ("Rate-limit report works again", "Rate-limit report works again after 3 failures."),
            ("Rate-limit report 恢复正常", "Rate-limit report 在失败 3 次后恢复正常。"),
        ),
        (
            AlertNotice(NoticeKind.failing, failures=1, error="failed: exit code 1"),
            ("Rate-limit report failed", "failed: exit code 1"),
            ("Rate-limit report 运行失败", "failed: exit code 1"),
        ),
        (
            AlertNotice(NoticeKind.still_failing, failures=25, error="failed: exit code 1"),
            ("Rate-limit report is still failing", "25 failures in a row: failed: exit code 1"),
            ("Rate-limit report 仍在失败", "连续失败 25 次：failed: exit code 1"),
        ),
    ],
)
def test_it_words_the_notices(
    notice: AlertNotice, en: tuple[str, str], zh: tuple[str, str]
) -> None:
    assert alert_texts(notice, "Rate-limit report", 4) == en
    with chinese():
        assert alert_texts(notice, "Rate-limit report", 4) == zh


def test_a_paused_notice_says_how_to_turn_it_back_on() -> None:
    notice = AlertNotice(NoticeKind.paused, failures=3, error="failed: exit code 1")
    title, body = alert_texts(notice, "Backup", 7)
    assert title == "Backup is paused"
    assert "domi-desktop schedule enable 7" in body and "(failed: exit code 1)" in body


def test_a_stale_notice_says_for_how_long() -> None:
    notice = AlertNotice(NoticeKind.stale, failures=0, stale_for=timedelta(days=4))
    assert alert_texts(notice, "Backup", 1) == (
        "Backup has not succeeded for 4 days",
        "No successful run for 4 days.",
    )
    with chinese():
        assert alert_texts(notice, "Backup", 1) == (
            "Backup 已 4 天没有成功运行",
            "已 4 天没有成功运行。",
        )


@pytest.mark.parametrize(
    ("span", "words"),
    [
        (timedelta(0), "0 seconds"),
        (timedelta(seconds=90), "1 minute 30 seconds"),
        (timedelta(days=1, hours=2), "1 day 2 hours"),
    ],
)
def test_spans_read_in_whole_units(span: timedelta, words: str) -> None:
    assert span_words(span) == words


@pytest.mark.parametrize(
    ("total", "limit", "en", "zh"),
    [
        (0, 3, None, None),
        (1, 3, "1 missed run is catching up.", "1 个错过的运行正在补跑。"),
        (
            200,
            3,
            "200 missed runs are catching up, 3 at a time.",
            "200 个错过的运行正在补跑，每次最多 3 个。",
        ),
    ],
)
def test_one_summary_for_the_burst(total: int, limit: int, en: str | None, zh: str | None) -> None:
    assert burst_text(total, limit) == en
    with chinese():
        assert burst_text(total, limit) == zh
