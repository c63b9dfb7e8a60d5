"""The conditions, gates and session triggers in words, phrased by the UI with ``tr`` from the
scheduler's values (the app's one translation system), in English and Chinese."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from domi_desktop.model import (
    Conditions,
    NetworkState,
    OnDeadline,
    SessionTriggers,
    SystemState,
)
from domi_desktop.scheduler.conditions import gate
from domi_desktop.ui import i18n
from domi_desktop.ui.condition_words import (
    conditions_words,
    gate_words,
    list_words,
    session_words,
)
from domi_desktop.ui.notices import span_words

DUE = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)


def battery(percent: int) -> SystemState:
    return SystemState(network=NetworkState.online, on_ac=False, battery_percent=percent)


@pytest.fixture(params=["en", "zh"])
def lang(request: pytest.FixtureRequest) -> Iterator[str]:
    """Each test in both languages; a text looked up with no Chinese for it fails the test."""
    i18n.set_language(request.param)
    i18n.reset_missing()
    yield request.param
    missing = i18n.missing()
    i18n.set_language("en")
    assert missing == set()


def said(lang: str, en: str, zh: str) -> str:
    return zh if lang == "zh" else en


@pytest.mark.parametrize(
    ("conditions", "kind", "en", "zh"),
    [
        (
            Conditions(on_ac_power=True, wait_at_most=6 * HOUR),
            "command",
            "Waits for the charger, at most 6 hours, then runs anyway.",
            "等待充电器，最多 6 小时，之后照常运行。",
        ),
        (Conditions(), "command", "Runs as soon as it is due.", "到期即运行。"),
        (Conditions(), "http", "Waits for the network.", "等待网络。"),
        (
            Conditions(
                unmetered_only=True,
                metered_after=timedelta(days=3),
                min_battery_percent=30,
                wait_at_most=timedelta(days=1, hours=12),
                on_deadline=OnDeadline.skip,
                stop_if_lost=True,
                keep_awake=True,
            ),
            "http",
            "Waits for an unmetered network (or a metered one after 3 days without a successful "
            "run) and the charger or 30 % battery, at most 1 day 12 hours, then skips the run. "
            "Stops if they go away, and runs once more when they are back. "
            "Keeps the computer awake while it runs.",
            "等待不计流量的网络（连续 3 天没有成功运行后也可用计流量的网络）、充电器或电量达到 30 %，"
            "最多 1 天 12 小时，之后跳过这次运行。条件失去时停止，恢复后再运行一次。"
            "运行期间不让电脑睡眠。",
        ),
        (
            Conditions(keep_awake=True),
            "command",
            "Runs as soon as it is due. Keeps the computer awake while it runs.",
            "到期即运行。运行期间不让电脑睡眠。",
        ),
        (
            Conditions(volume="LABEL=Backup", wait_at_most=timedelta(days=3)),
            "command",
            "Waits for the disk Backup, at most 3 days, then runs anyway.",
            "等待磁盘 Backup，最多 3 天，之后照常运行。",
        ),
        (
            Conditions(network_name="ethernet", path_exists="/mnt/nas/ready"),
            "command",
            "Waits for a wired network and /mnt/nas/ready.",
            "等待有线网络、路径 /mnt/nas/ready。",
        ),
    ],
)
def test_the_conditions_in_a_plain_sentence(
    lang: str, conditions: Conditions, kind: str, en: str, zh: str
) -> None:
    assert conditions_words(conditions, kind) == said(lang, en, zh)


def test_with_its_time_it_is_one_sentence(lang: str) -> None:
    when = said(lang, "At 00:00, every day", "每天 00:00")
    three_days = Conditions(volume="Backup", wait_at_most=timedelta(days=3))
    assert conditions_words(three_days, "command", when) == said(
        lang,
        "At 00:00, every day, when the disk Backup is plugged in; waits at most 3 days, then "
        "runs anyway.",
        "每天 00:00，插入磁盘 Backup 时；最多等待 3 天，之后照常运行。",
    )
    both = Conditions(volume="Backup", on_ac_power=True, network_name="office")
    assert conditions_words(both, "command", when) == said(
        lang,
        "At 00:00, every day, when the disk Backup is plugged in and when on the office network;"
        " waits for the charger.",
        "每天 00:00，插入磁盘 Backup 时、连上网络 office 时；等待充电器。",
    )
    assert conditions_words(Conditions(on_ac_power=True), "command", when) == said(
        lang, "Waits for the charger.", "等待充电器。"
    )


def test_what_a_gate_says(lang: str) -> None:
    low = gate(Conditions(min_battery_percent=50), "command", battery(35), DUE, DUE, None)
    assert gate_words(low) == said(
        lang, "waiting for the charger (battery 35 % < 50 %)", "正在等待充电器（电量 35 % < 50 %）"
    )
    state = SystemState(network=NetworkState.offline, metered=True, on_ac=False)
    several = gate(Conditions(unmetered_only=True, on_ac_power=True), "http", state, DUE, DUE, None)
    assert gate_words(several) == said(
        lang,
        "waiting for the network, an unmetered network and the charger",
        "正在等待网络、不计流量的网络、充电器",
    )
    skipping = Conditions(on_ac_power=True, wait_at_most=6 * HOUR, on_deadline=OnDeadline.skip)
    skipped = gate(skipping, "command", battery(90), DUE, DUE + 7 * HOUR, None)
    assert gate_words(skipped) == said(
        lang, "skipped after waiting 6 hours for the charger", "等待充电器 6 小时后跳过"
    )
    anyway = gate(Conditions(on_ac_power=True, wait_at_most=6 * HOUR), "command", battery(90),
                  DUE, DUE + 6 * HOUR, None)  # fmt: skip
    assert gate_words(anyway) == said(
        lang, "ran anyway after waiting 6 hours for the charger", "等待充电器 6 小时后照常运行"
    )
    portal = gate(Conditions(), "http", SystemState(network=NetworkState.portal), DUE, DUE, None)
    assert gate_words(portal) == said(
        lang,
        "waiting for the network (behind a captive portal)",
        "正在等待网络（需先登录热点门户）",
    )
    assert gate_words(gate(Conditions(), "command", SystemState(), DUE, DUE, None)) is None


def test_the_english_of_a_gate_is_what_the_run_records() -> None:
    """The words the app shows in English are those the scheduler records on the run."""
    skipping = Conditions(on_ac_power=True, wait_at_most=6 * HOUR, on_deadline=OnDeadline.skip)
    for verdict in (
        gate(Conditions(min_battery_percent=50), "command", battery(35), DUE, DUE, None),
        gate(skipping, "command", battery(90), DUE, DUE + 7 * HOUR, None),
        gate(Conditions(volume="LABEL=Backup"), "command", SystemState(), DUE, DUE, None),
    ):
        assert gate_words(verdict) == verdict.reason


@pytest.mark.parametrize(
    ("span", "en", "zh"),
    [
        (timedelta(hours=1), "1 hour", "1 小时"),
        (timedelta(minutes=90), "1 hour 30 minutes", "1 小时 30 分钟"),
        (timedelta(seconds=45), "45 seconds", "45 秒"),
        (timedelta(0), "0 seconds", "0 秒"),
        (timedelta(days=2), "2 days", "2 天"),
    ],
)
def test_spans_for_people(lang: str, span: timedelta, en: str, zh: str) -> None:
    assert span_words(span) == said(lang, en, zh)


def test_lists(lang: str) -> None:
    assert list_words([]) == ""
    assert list_words(["a"]) == "a"
    assert list_words(["a", "b", "c"]) == said(lang, "a, b and c", "a、b、c")


def test_the_session_sentence(lang: str) -> None:
    assert session_words(SessionTriggers()) == ""
    assert session_words(SessionTriggers(at_unlock=True, min_interval=HOUR)) == said(
        lang, "Also at unlock, at most once every 1 hour.", "也在解锁时运行，每 1 小时最多一次。"
    )
    assert session_words(SessionTriggers(at_login=True, only=True)) == said(
        lang, "Only at login (not by its time).", "仅在登录时运行。"
    )
    assert session_words(SessionTriggers(at_login=True, on_resume=True)) == said(
        lang, "Also at login and on waking from sleep.", "也在登录时、从睡眠唤醒时运行。"
    )
