"""A schedule's policies and session moments in words for the terminal: ``overlap: skip``,
``only at login (not by its time)``. The CLI speaks English; the windows say the same in the
chosen language (``ui.condition_words``)."""

from __future__ import annotations

from domi_desktop.model import (
    Alerts,
    AtWindowEnd,
    Conditions,
    Monitor,
    OnDeadline,
    Placement,
    Policies,
    SessionTriggers,
)
from domi_desktop.scheduler.conditions import format_span, join_words
from domi_desktop.scheduler.resources import waited_for

MOMENTS = {
    "at_login": "at login",
    "at_unlock": "at unlock",
    "on_resume": "on waking from sleep",
    "before_sleep": "before sleep",
}
"""Each ``SessionTriggers`` flag and the moment it names."""


def moments_words(session: SessionTriggers) -> str:
    """``at login and at unlock``; empty without moments."""
    return join_words([words for flag, words in MOMENTS.items() if getattr(session, flag)])


def only_words(session: SessionTriggers) -> str | None:
    """``only at login`` for a schedule its moments alone run (its expression fires nothing:
    an imported ``@reboot``, the editor's "Only then"), else ``None``."""
    return f"only {moments_words(session)}" if session.only and session.any else None


def policy_lines(policies: Policies) -> list[tuple[str, str]]:
    """Label and words of each policy: the ones every schedule has, then those it sets."""
    catch_up = policies.catch_up.value
    if policies.catch_up_within is not None:
        catch_up += f", if at most {format_span(policies.catch_up_within)} late"
    lines = [
        ("overlap", policies.overlap.value),
        ("catch-up", catch_up),
        ("timeout", format_span(policies.timeout) if policies.timeout else "none"),
        ("retries", _retries(policies)),
    ]
    if policies.concurrency_key is not None:
        lines.append(("shares with", f"the schedules of key {policies.concurrency_key!r}"))
    if policies.jitter:
        lines.append(("jitter", f"starts up to {format_span(policies.jitter)} late"))
    if policies.wake_to_run:
        lines.append(("wake", "wakes the computer to run it"))
    if policies.background:
        lines.append(("priority", "in the background: lowest CPU and disk priority"))
    if policies.placement is Placement.machines:
        lines.append(("runs on", ", ".join(policies.machines)))
    elif policies.placement is Placement.first_awake:
        lines.append(("runs on", "the first machine awake"))
    waits = _conditions(policies.conditions)
    if waits:
        lines.append(("waits for", waits))
    session = policies.session
    if session.any and not session.only:
        also = f"also {moments_words(session)}"
        if session.min_interval is not None:
            also += f", at most once every {format_span(session.min_interval)}"
        lines.append(("moments", also))
    if policies.alerts is not None:
        lines.append(("alerts", _alerts(policies.alerts)))
    if policies.monitor != Monitor():
        lines.append(("monitors", _monitor(policies.monitor)))
    return lines


def _retries(policies: Policies) -> str:
    if not policies.retries:
        return "none"
    return (
        f"{policies.retries}, the first after {format_span(policies.retry_backoff)}, "
        "each later one after twice the wait before it"
    )


def _conditions(conditions: Conditions) -> str:
    """``the network and the disk Backup; at most 1 hour, then runs anyway``; empty for none."""
    needs = []
    if conditions.requires_network:
        needs.append("the network")
    if conditions.unmetered_only:
        metered = conditions.metered_after
        needs.append(
            "an unmetered network"
            + (
                f" (a metered one after {format_span(metered)} without a success)"
                if metered
                else ""
            )
        )
    if conditions.on_ac_power:
        needs.append("the charger")
    if conditions.min_battery_percent is not None:
        needs.append(f"a battery at {conditions.min_battery_percent} % or the charger")
    for field in ("volume", "network_name", "path_exists"):
        value = getattr(conditions, field)
        if value is not None:
            needs.append(waited_for(field, value))
    if conditions.away is not None:
        back = {"pause": "pauses it", "stop": "stops it", "continue": "lets it run"}
        needs.append(
            f"you to step away for {format_span(conditions.away)}"
            f" (when you come back, {back[conditions.on_return.value]})"
        )
    window = conditions.window
    if window is not None:
        end = "runs then" if conditions.at_window_end is AtWindowEnd.run else "skips the run"
        needs.append(f"the window {window.text} (once per period; when it ends unused, {end})")
    if not needs:
        return ""
    text = join_words(needs)
    if conditions.wait_at_most is not None:
        then = "runs anyway" if conditions.on_deadline is OnDeadline.run else "skips the run"
        text += f"; at most {format_span(conditions.wait_at_most)}, then {then}"
    if conditions.stop_if_lost:
        text += "; stops the job if one goes away"
    if conditions.keep_awake:
        text += "; keeps the computer awake while it runs"
    return text


def _alerts(alerts: Alerts) -> str:
    said = []
    if alerts.notify_every:
        said.append(f"a reminder every {alerts.notify_every} failures")
    if alerts.cooldown is not None:
        said.append(f"a reminder after {format_span(alerts.cooldown)} still failing")
    said.append("says when it works again" if alerts.notify_recovery else "silent on recovery")
    if alerts.auto_pause_after:
        said.append(f"pauses after {alerts.auto_pause_after} failures in a row")
    if alerts.stale_after is not None:
        said.append(f"tells when no run succeeded for {format_span(alerts.stale_after)}")
    return "; ".join(said)


def _monitor(monitor: Monitor) -> str:
    said = []
    if monitor.healthchecks_url:
        said.append(f"pings {monitor.healthchecks_url}")
    if monitor.healthchecks_key:
        where = monitor.healthchecks_api or "Healthchecks"
        said.append(f"keeps a check at {where} (API key: secret {monitor.healthchecks_key})")
    if monitor.webhook:
        said.append(f"posts to {monitor.webhook}")
    said.append(f"grace {format_span(monitor.grace)}")
    return "; ".join(said)
