"""crontab export: the line read back through domi's own crontab reader (Debian's rules) gives
the same expression, zone, command, environment and stdin: the ``%`` rule round-trips."""

from __future__ import annotations

import shlex
from datetime import timedelta

import pytest

from domi_desktop.crontab import read_crontab, to_action
from domi_desktop.export import ExportError, ExportTarget, export_schedule
from domi_desktop.model import CatchUp, CommandAction, Overlap, Policies, Schedule

SKIP_LATE = Policies(catch_up=CatchUp.skip)


def _export(schedule: Schedule, lossy: bool = False) -> str:
    (file,) = export_schedule(schedule, ExportTarget.crontab, lossy=lossy).files
    return file.text


@pytest.mark.parametrize(
    ("expr", "tz"),
    [("*/5 9-17 * * mon-fri", "Europe/Riga"), ("@daily", "local"), ("0 0 1,15 * 0", "UTC")],
)
def test_it_reads_back_as_the_same_expression_zone_and_command(expr: str, tz: str) -> None:
    action = CommandAction(
        shell="backup --note '50% done' && echo 100%",
        env=(("GREETING", " padded "), ("PLAIN", "a=b")),
        stdin="first % line\nsecond\n",
    )
    text = _export(Schedule(9, "Backup", expr, tz, action, policies=SKIP_LATE))
    table = read_crontab(text)
    assert [p for p in table.problems if p.severity == "error"] == []
    (entry,) = table.entries
    assert entry.expr == expr
    assert entry.tz == (None if tz == "local" else tz)
    assert entry.command == "flock -n /tmp/domi-9.lock /bin/sh -c " + shlex.quote(
        action.shell or ""
    )
    assert entry.stdin == action.stdin
    assert to_action(entry).env == (("GREETING", " padded "), ("PLAIN", "a=b"))


def test_it_runs_argv_in_the_working_directory_under_a_timeout() -> None:
    action = CommandAction(argv=("/usr/bin/rsync", "-a", "my dir/", "host:"), cwd="/srv/a b")
    policies = Policies(
        catch_up=CatchUp.skip, timeout=timedelta(minutes=2), overlap=Overlap.parallel
    )
    (entry,) = read_crontab(
        _export(Schedule(4, "Sync", "0 * * * *", "UTC", action, policies=policies))
    ).entries
    assert shlex.split(entry.command) == [
        "cd",
        "/srv/a b",
        "&&",
        "timeout",
        "120",
        "/usr/bin/rsync",
        "-a",
        "my dir/",
        "host:",
    ]


def test_it_refuses_catch_up_and_secrets_unless_lossy() -> None:
    action = CommandAction(argv=("/bin/true",), secret_env=(("TOKEN", "tok"),))
    schedule = Schedule(4, "Sync", "0 * * * *", "UTC", action)
    with pytest.raises(ExportError) as error:
        _export(schedule)
    assert "catch-up 'latest'" in str(error.value) and "secrets" in str(error.value)
    text = _export(schedule, lossy=True)
    assert "tok" not in text.replace("domi-4", "")
