"""Wake to run in the sleep lab: with wake-to-run on, a job due while the guest is
suspended starts ≤ 60 s after its due, 20 of 20, the guest woken by the app's own alarm (the host
suspends it without arming the RTC; QMP ``system_wakeup`` after a safety margin would fail the
trial). The app arms a ``CLOCK_REALTIME_ALARM`` timerfd (root in the guest has CAP_WAKE_ALARM);
the kernel programs the CMOS RTC with it as the guest suspends.
"""

from __future__ import annotations

import time

import pytest

from tests.sleeplab.vm import Lab, epoch, iso, minute_at, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.sleeplab, pytest.mark.linux_only]

TRIALS = 20
STARTED_WITHIN = 60.0
WOKE_NOTE = "woke the computer to run"
NOTES: list[bool] = []
"""Whether each trial's run said it woke the computer (for the test after the trials)."""
UNNOTED: list[str] = []
"""For each trial whose run did not say so: its due, its reason and the app's log about it."""


def test_a_wake_to_run_job_due_while_asleep_starts_within_a_minute_20_of_20(lab: Lab) -> None:
    sid = lab.add("woken", "* * * * *", "date +%s", "--wake")
    outcomes = []
    dues: list[float] = []
    for trial in range(TRIALS):
        # Asleep from 10 s after a due (its run has ended) until the app's alarm wakes the
        # guest for the next one (30 s ahead of it).
        sleep_at = minute_at(lab.now(), 10, lead=1)
        due = sleep_at + 50
        slept = lab.suspend(None, at=sleep_at, safety=90)
        assert not slept.woken_by_host, f"the app's alarm did not wake the guest for {due}"
        if trial == TRIALS - 1:
            # A person comes to the machine to disable the schedule below. Unattended, the app
            # sends the guest back to sleep once the last woken run ends and nothing is due
            # soon, and did so in the middle of that command (the agent's answer was lost).
            lab.type_key("shift")

        def ended(due: float = due) -> dict[str, object] | None:
            # Its reason is written with its end: read at its start, it was not there yet.
            runs = [r for r in lab.runs(sid, limit=5) if epoch(r["due"]) == due]
            return runs[0] if runs and runs[0]["finished_at"] else None

        dues.append(due)
        run = wait_for(ended, STARTED_WITHIN + 30, f"the end of the run due at {due}")
        late = epoch(str(run["started_at"])) - due
        outcomes.append((slept.resumed - due, late, run["reason"]))
        assert late <= STARTED_WITHIN, (run, slept)
        assert due - 35 <= slept.resumed <= due, "not woken at the alarm's lead (30 s)"
        time.sleep(1)
    lab.cli("schedule", "disable", str(sid))
    NOTES[:] = [str(reason or "").startswith(WOKE_NOTE) for _, _, reason in outcomes]
    if not all(NOTES):
        log = lab.app_log().splitlines()
        for noted, due, (_, _, reason) in zip(NOTES, dues, outcomes, strict=True):
            if not noted:
                UNNOTED.append(f"due {iso(due)}, reason {reason!r}:\n" + _around(log, due))
    woke = [round(w, 1) for w, _, _ in outcomes]
    print(
        f"\nsleeplab wake trials: {TRIALS} of {TRIALS} started within {STARTED_WITHIN:.0f} s of"
        f" their due (worst {max(late for _, late, _ in outcomes):.1f} s); the guest woke at"
        f" {min(woke)}..{max(woke)} s from the due; {sum(NOTES)} say they woke the computer"
    )


def test_each_run_the_alarm_woke_the_guest_for_says_so() -> None:
    """Of the trials above (run first, in this module's order)."""
    assert len(NOTES) == TRIALS and all(NOTES), "\n\n".join(UNNOTED) or NOTES


def _around(log: list[str], due: float) -> str:
    """The app's log lines from the sleep before ``due`` to just after it."""
    first, last = time.gmtime(due - 75), time.gmtime(due + 15)
    stamp = "%Y-%m-%d %H:%M:%S"
    low, high = time.strftime(stamp, first), time.strftime(stamp, last)
    return "\n".join(line for line in log if low <= line[:19] <= high)
