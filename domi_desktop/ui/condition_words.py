"""The scheduler's conditions, gates and session triggers in the app's language, phrased here from
their values with ``tr``, the app's one translation system. The scheduler keeps only the English
words it records on a run (``Gate.reason``), as the log keeps English; the History translates
those through ``history.texts.reason_words``.

Punctuation and word order are the catalog's too: a Chinese sentence is not an English one with
its words replaced (``{lead}; {waits}`` is ``{lead}；{waits}``, sentences are not spaced)."""

from __future__ import annotations

from datetime import timedelta

from domi_desktop.model import Conditions, NetworkState, OnDeadline, SessionTriggers
from domi_desktop.scheduler.conditions import RESOURCES, Gate, Need, Unmet, Verdict, needs_network
from domi_desktop.scheduler.resources import ETHERNET, FIELDS, volume_name
from domi_desktop.ui.i18n import register, tr
from domi_desktop.ui.notices import span_words


def list_words(items: list[str]) -> str:
    """``a, b and c``; ``a、b、c``."""
    if len(items) <= 1:
        return "".join(items)
    return tr("{items} and {last}", items=tr(", ").join(items[:-1]), last=items[-1])


def _sentence(clauses: list[str]) -> str:
    text = clauses[0]
    for clause in clauses[1:]:
        text = tr("{first}, {then}", first=text, then=clause)
    return tr("{sentence}.", sentence=text)


def sentences_words(sentences: list[str]) -> str:
    """Sentences one after the other: spaced in English, not in Chinese."""
    text = sentences[0]
    for sentence in sentences[1:]:
        text = tr("{first} {then}", first=text, then=sentence)
    return text


def resource_words(field: str, value: str) -> str:
    """What a run waits for: "the disk Backup", "the office network", "/mnt/nas/ready"."""
    if field == "volume":
        return tr("the disk {name}", name=volume_name(value))
    if field == "network_name":
        if value.lower() == ETHERNET:
            return tr("a wired network")
        return tr("the {name} network", name=value)
    return tr("{path}", path=value)


def when_words(field: str, value: str) -> str:
    """The clause of a schedule's sentence: "when the disk Backup is plugged in"."""
    what = resource_words(field, value)
    if field == "volume":
        return tr("when {what} is plugged in", what=what)
    if field == "network_name":
        return tr("when on {what}", what=what)
    return tr("when {path} exists", path=value)


def resources_waited_for(conditions: Conditions) -> list[str]:
    """What ``conditions`` waits for besides the network and the power, in words."""
    return [
        resource_words(field, value)
        for field in FIELDS
        if (value := getattr(conditions, field)) is not None
    ]


def conditions_words(conditions: Conditions, action_kind: str, when: str | None = None) -> str:
    """The editor's sentence: "Waits for the charger, at most 6 hours, then runs anyway."; with
    ``when`` (the cron expression in words) and a disk, a network name or a path: "At 00:00,
    every day, when the disk Backup is plugged in; waits at most 3 days, then runs anyway." """
    wanted: list[str] = []
    if conditions.unmetered_only:
        item = tr("an unmetered network")
        if conditions.metered_after is not None:
            item = tr(
                "{network} (or a metered one after {span} without a successful run)",
                network=item,
                span=span_words(conditions.metered_after),
            )
        wanted.append(item)
    elif needs_network(conditions, action_kind):
        wanted.append(tr("the network"))
    if conditions.on_ac_power:
        wanted.append(tr("the charger"))
    elif conditions.min_battery_percent is not None:
        wanted.append(tr("the charger or {level} % battery", level=conditions.min_battery_percent))
    if conditions.away is not None:
        wanted.append(tr("you to step away for {span}", span=span_words(conditions.away)))
    if conditions.window is not None:
        wanted.append(tr("the window {hours}", hours=conditions.window.text))
    resources = [
        (need.value, value)
        for need in RESOURCES
        if (value := getattr(conditions, need.value)) is not None
    ]
    lead = None
    if when is not None and resources:
        present = list_words([when_words(field, value) for field, value in resources])
        lead = tr("{first}, {then}", first=when, then=present)
    else:
        wanted.extend(resource_words(field, value) for field, value in resources)
    sentences: list[str] = []
    if not wanted and lead is None:
        sentences.append(tr("Runs as soon as it is due."))
    else:
        clauses = [] if lead is None else [lead]
        if wanted:
            what = list_words(wanted)
            if lead is None:
                clauses.append(tr("Waits for {what}", what=what))
            else:
                clauses[0] = tr("{lead}; waits for {what}", lead=clauses[0], what=what)
        if conditions.wait_at_most is not None:
            span = span_words(conditions.wait_at_most)
            if lead is not None and not wanted:
                clauses[0] = tr("{lead}; waits at most {span}", lead=clauses[0], span=span)
            else:
                clauses.append(tr("at most {span}", span=span))
            if conditions.on_deadline is OnDeadline.run:
                clauses.append(tr("then runs anyway"))
            else:
                clauses.append(tr("then skips the run"))
        sentences.append(_sentence(clauses))
        if conditions.stop_if_lost:
            sentences.append(tr("Stops if they go away, and runs once more when they are back."))
    if conditions.keep_awake:
        sentences.append(tr("Keeps the computer awake while it runs."))
    return sentences_words(sentences)


def unmet_words(item: Unmet) -> str:
    if item.need is Need.network:
        if item.network is NetworkState.portal:
            return tr("the network (behind a captive portal)")
        if item.network is NetworkState.limited:
            return tr("the network (local network only)")
        return tr("the network")
    if item.need is Need.unmetered:
        return tr("an unmetered network")
    if item.need is Need.charger:
        return tr("the charger")
    if item.need is Need.window:
        return tr("the window {hours}", hours=item.name or "")
    if item.need is Need.away:
        return tr("you to step away")
    if item.need in RESOURCES:
        what = resource_words(item.need.value, item.name or "")
        if item.hidden:
            return tr(
                "{what} (macOS tells the Wi-Fi name only to apps allowed Location Services)",
                what=what,
            )
        return what
    return tr(
        "the charger (battery {percent} % < {minimum} %)",
        percent=item.battery_percent,
        minimum=item.minimum,
    )


def gate_words(gate: Gate) -> str | None:
    """What a waiting, skipped or run-anyway run says: "waiting for the network"; ``None`` for a
    plain run."""
    if gate.said is not None:
        return gate.said
    what = list_words([unmet_words(item) for item in gate.unmet])
    if gate.verdict is Verdict.wait:
        return tr("waiting for {what}", what=what)
    if gate.verdict is Verdict.run:
        if gate.metered_allowance is None:
            return None
        return tr(
            "ran on a metered network after {span} without a successful run",
            span=span_words(gate.metered_allowance),
        )
    span = span_words(gate.waited or timedelta(0))
    if gate.verdict is Verdict.run_anyway:
        return tr("ran anyway after waiting {span} for {what}", span=span, what=what)
    return tr("skipped after waiting {span} for {what}", span=span, what=what)


_MOMENTS = {
    "at_login": "at login",
    "at_unlock": "at unlock",
    "on_resume": "on waking from sleep",
    "before_sleep": "before sleep",
}


def session_words(session: SessionTriggers) -> str:
    """ "Also at login and at unlock, at most once every 1 hour." (empty without triggers)."""
    moments = [tr(text) for flag, text in _MOMENTS.items() if getattr(session, flag)]
    if not moments:
        return ""
    said = list_words(moments)
    text = tr(
        "Only {moments} (not by its time)" if session.only else "Also {moments}", moments=said
    )
    if session.min_interval is not None:
        text = tr(
            "{text}, at most once every {span}", text=text, span=span_words(session.min_interval)
        )
    return tr("{sentence}.", sentence=text)


register(
    "zh",
    {
        ", ": "、",
        "{items} and {last}": "{items}、{last}",
        "{first}, {then}": "{first}，{then}",
        "{first} {then}": "{first}{then}",
        "{sentence}.": "{sentence}。",
        "the disk {name}": "磁盘 {name}",
        "a wired network": "有线网络",
        "the {name} network": "网络 {name}",
        # A path is said as it is written in English; Chinese names what it is.
        "{path}": "路径 {path}",
        "when {what} is plugged in": "插入{what} 时",
        "when on {what}": "连上{what} 时",
        "when {path} exists": "{path} 存在时",
        "an unmetered network": "不计流量的网络",
        "{network} (or a metered one after {span} without a successful run)":
            "{network}（连续 {span}没有成功运行后也可用计流量的网络）",
        "the network": "网络",
        "the charger": "充电器",
        "the window {hours}": "时段 {hours}",
        "you to step away": "你离开电脑",
        "you to step away for {span}": "你离开电脑 {span}",
        "the charger or {level} % battery": "充电器或电量达到 {level} %",
        "Runs as soon as it is due.": "到期即运行。",
        "Waits for {what}": "等待{what}",
        "{lead}; waits for {what}": "{lead}；等待{what}",
        "{lead}; waits at most {span}": "{lead}；最多等待 {span}",
        "at most {span}": "最多 {span}",
        "then runs anyway": "之后照常运行",
        "then skips the run": "之后跳过这次运行",
        "Stops if they go away, and runs once more when they are back.":
            "条件失去时停止，恢复后再运行一次。",
        "Keeps the computer awake while it runs.": "运行期间不让电脑睡眠。",
        "the network (behind a captive portal)": "网络（需先登录热点门户）",
        "the network (local network only)": "网络（只连到本地网络）",
        "{what} (macOS tells the Wi-Fi name only to apps allowed Location Services)":
            "{what}（macOS 只向获准使用定位服务的应用提供 Wi-Fi 名称）",
        "the charger (battery {percent} % < {minimum} %)": "充电器（电量 {percent} % < {minimum} %）",
        "waiting for {what}": "正在等待{what}",
        "ran on a metered network after {span} without a successful run":
            "已 {span}没有成功运行，因此使用计流量的网络运行",
        "ran anyway after waiting {span} for {what}": "等待{what} {span}后照常运行",
        "skipped after waiting {span} for {what}": "等待{what} {span}后跳过",
        "at login": "登录时",
        "at unlock": "解锁时",
        "on waking from sleep": "从睡眠唤醒时",
        "before sleep": "睡眠前",
        "Only {moments} (not by its time)": "仅在{moments}运行",
        "Also {moments}": "也在{moments}运行",
        "{text}, at most once every {span}": "{text}，每 {span}最多一次",
    },
)  # fmt: skip
