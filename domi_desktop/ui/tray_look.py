"""What the tray icon shows (its look and its tooltip) and the last line a failed run printed,
for its notification."""

from __future__ import annotations

from domi_desktop.errors import DomiError
from domi_desktop.model import RunStatus
from domi_desktop.runtime.view import EngineState
from domi_desktop.ui.i18n import person_time, tr
from domi_desktop.ui.sentence import waiting_lines

TYPE_CHECKING = False
if TYPE_CHECKING:
    from domi_desktop.ports import RunReader

LAST_LINE = 200
"""Characters of a failed run's last line in its notification."""


def look(engine: EngineState, attention: bool) -> tuple[str, str]:
    """The icon's state (idle, running, paused, attention) and the tooltip's text."""
    running = engine.running_runs()
    paused = engine.paused
    state = "attention" if attention else "running" if running else "paused" if paused else "idle"
    lines = [tr("domi-desktop")]
    upcoming = None if paused else _next_fire(engine)
    if paused:
        lines.append(tr("All schedules paused"))
    elif upcoming:
        lines.append(tr("Next: {name} · {when}", name=upcoming[0], when=upcoming[1]))
    else:
        lines.append(tr("Nothing scheduled"))
    if running:
        lines.append(tr("{count} running", count=len(running)))
    lines += waiting_lines(engine)
    if attention:
        lines.append(tr("Attention: {what}", what=tr("a late or failed run")))
    return state, "\n".join(lines)


def _next_fire(engine: EngineState) -> tuple[str, str] | None:
    if not engine.soonest:
        return None
    upcoming, schedule = engine.soonest[0]
    return schedule.name, person_time(upcoming, schedule.tz)


def last_line(store: RunReader, run_id: int) -> str | None:
    """The last line a run printed (stdout and stderr are one stream), shortened; "" when it
    printed nothing, None while its end is not readable yet."""
    try:
        run = store.get_run(run_id)
    except DomiError:
        return ""  # not on record (or unreadable): nothing to wait for
    tail = run.output_tail
    if tail is None or run.status is RunStatus.running:
        return None
    # The app's own notes in the log ("[domi-desktop] exit code 3") are not the job's.
    lines = [
        line.strip()
        for line in (tail or "").splitlines()
        if line.strip() and not line.startswith("[domi-desktop]")
    ]
    if not lines:
        return ""
    return lines[-1] if len(lines[-1]) <= LAST_LINE else lines[-1][: LAST_LINE - 1] + "…"
