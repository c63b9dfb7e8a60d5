"""Wake to run in the sleep lab, beside the 20 trials (test_wake_trials.py): without wake-to-run a
job due while the guest sleeps runs late at the resume; after an unattended wake the app suspends
the guest again ≤ 120 s after the woken job ends, and never when input arrived (a key typed on the
guest's PS/2 keyboard through QMP: the app counts the input devices' interrupts, having no
logind).
"""

from __future__ import annotations

import time

import pytest

from tests.sleeplab.vm import Lab, cron_at, epoch, minute_at, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.sleeplab, pytest.mark.linux_only]

RESUSPENDED_WITHIN = 120.0
WOKE_NOTE = "woke the computer to run"


def keyboard_interrupts(lab: Lab) -> int:
    lines = lab.read("/proc/interrupts").decode().splitlines()
    (line,) = [line for line in lines if "i8042" in line and line.split(":")[0].strip() == "1"]
    return sum(int(word) for word in line.split()[1:] if word.isdigit())


def woken_run(lab: Lab, wake: bool) -> tuple[int, float, float]:
    """A daily job due a minute or two ahead; the guest suspended (RTC not armed) 50 s before its
    due, and woken by the host 75 s after it (past the 60 s grace) unless the app's alarm woke it
    first; returns the schedule, its due and the guest's wall clock at the resume."""
    due = minute_at(lab.now(), 0, lead=90)
    sid = lab.add("daily", cron_at(due), "sleep 5; date +%s", *(["--wake"] if wake else []))
    assert lab.now() < due - 45, "the schedule was added too late"
    slept = lab.suspend(None, at=due - 50, safety=125)
    assert slept.woken_by_host != wake, slept
    return sid, due, slept.resumed


def ended(lab: Lab, sid: int) -> dict[str, object] | None:
    runs = lab.runs(sid, limit=5)
    return runs[0] if runs and runs[0]["finished_at"] else None


def suspended_by_the_app(lab: Lab, within: float) -> float | None:
    """The host's clock when the guest was seen suspended, polling QMP; None if not ``within``."""
    deadline = time.time() + within
    while time.time() < deadline:
        if lab.status() == "suspended":
            return time.time()
        time.sleep(0.5)
    return None


def lab_now(offset: float) -> float:
    """The guest's wall clock, read on the host's (``offset``: the host's minus the guest's)."""
    return time.time() - offset


def test_without_wake_to_run_the_job_runs_late_at_the_resume(lab: Lab) -> None:
    sid, due, resumed = woken_run(lab, wake=False)  # the host wakes it 75 s after the due
    run = wait_for(lambda: ended(lab, sid), 60, "the late run")
    lab.cli("schedule", "disable", str(sid))
    assert resumed - due > 60
    assert run["late"] and run["trigger"] == "catch_up" and run["status"] == "succeeded", run
    assert epoch(str(run["fired_at"])) - resumed <= 20.0, (run, resumed)
    assert not str(run["reason"] or "").startswith(WOKE_NOTE)


def test_after_an_unattended_wake_the_app_suspends_the_guest_again(lab: Lab) -> None:
    offset = time.time() - lab.now()  # host clock minus the guest's
    sid, due, resumed = woken_run(lab, wake=True)
    assert due - 35 <= resumed <= due, "the app's alarm woke the guest at its lead"
    # Watched through QMP alone: a request to the agent may be cut by the very suspend awaited.
    asleep = suspended_by_the_app(lab, due - lab_now(offset) + 90 + RESUSPENDED_WITHIN)
    assert asleep is not None, "the guest was not suspended again"
    lab.qmp("system_wakeup")
    wait_for(lambda: lab.status() == "running", 30, "the guest running again", every=1)
    lab.reach()
    run = ended(lab, sid)
    assert run is not None, "suspended before the woken run ended"
    job_end = epoch(str(run["finished_at"])) + offset
    lab.cli("schedule", "disable", str(sid))
    assert str(run["reason"] or "").startswith(WOKE_NOTE), run
    assert asleep - job_end <= RESUSPENDED_WITHIN, (asleep - job_end, run)
    print(f"\nsleeplab: suspended again {asleep - job_end:.1f} s after the woken job ended")
    assert "nobody used the machine: back to sleep" in lab.app_log()


def test_after_a_wake_with_input_the_app_leaves_the_guest_awake(lab: Lab) -> None:
    sid, _due, _resumed = woken_run(lab, wake=True)
    before = keyboard_interrupts(lab)
    lab.type_key("shift")
    time.sleep(1)
    assert keyboard_interrupts(lab) > before, "the key did not reach the guest's i8042"
    run = wait_for(lambda: ended(lab, sid), 90, "the woken run")
    asleep = suspended_by_the_app(lab, RESUSPENDED_WITHIN + 30)
    if asleep is not None:
        lab.qmp("system_wakeup")
        lab.reach()
    lab.cli("schedule", "disable", str(sid))
    assert asleep is None, "the app suspended a guest someone typed on"
    assert str(run["reason"] or "").startswith(WOKE_NOTE), run
    assert "the machine stays awake: someone used it" in lab.app_log()
