"""systemd export: the timer fires when domi does (checked with systemd-analyze calendar), the
differences on DST days are named, and systemd-analyze verify accepts the units."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from systemd_calendar import SYSTEMD_ANALYZE, ZONES, cases, compare, systemd_elapses

from domi_desktop.cron import parse
from domi_desktop.export import ExportError, ExportTarget, export_schedule, on_calendar
from domi_desktop.model import (
    CatchUp,
    CommandAction,
    HttpAction,
    Overlap,
    Policies,
    Schedule,
)


def needs_systemd(test: Callable[..., None]) -> Callable[..., None]:
    """systemd is Linux's: elsewhere the test is deselected; on Linux without it, skipped."""
    missing = pytest.mark.skipif(
        SYSTEMD_ANALYZE is None, reason="systemd-analyze is missing (Debian package: systemd)"
    )
    return pytest.mark.linux_only(missing(test))


def _schedule(expr: str, tz: str = "UTC", **kwargs: object) -> Schedule:
    action = kwargs.pop("action", CommandAction(argv=("/bin/true",)))
    return Schedule(1, "Backup", expr, tz, action, **kwargs)  # type: ignore[arg-type]


# Slow: a systemd-analyze per case with a named zone (tens of seconds); make test runs it, the
# five-minute loop (make test-fast) leaves it out.
@needs_systemd
@pytest.mark.slow
def test_it_fires_when_domi_does_for_a_sample_of_expressions_as_exported() -> None:
    checked, failures = compare(cases(150, seed=14, named=True))
    assert checked == 150 * len(ZONES)
    assert failures == []


@needs_systemd
@pytest.mark.slow
def test_it_fires_when_domi_does_for_ten_thousand_expressions_in_five_zones() -> None:
    # Zone-less specs run in TZ=zone: systemd computes the same elapses without forking a
    # child per elapse, which a zone named in the spec costs (70 times slower).
    checked, failures = compare(cases(10_000, seed=2024, named=False))
    assert checked == 10_000 * len(ZONES)
    assert failures == []


@needs_systemd
@pytest.mark.slow  # 80 systemd-analyze runs, forking a child per elapse for a named zone
def test_it_gets_the_same_elapses_from_a_named_zone_as_from_running_in_that_zone() -> None:
    named = cases(40, seed=7, named=True)
    zoneless = cases(40, seed=7, named=False)
    for a, b in zip(named, zoneless, strict=True):
        assert systemd_elapses(list(a.specs), a.base) == systemd_elapses(
            list(b.specs), b.base, b.run_in
        )


def test_it_splits_the_day_of_month_or_day_of_week_rule_into_two_lines() -> None:
    assert on_calendar(parse("0 9 1,15 * mon-fri"), "Europe/Riga") == (
        "*-*-01,15 09:00:00 Europe/Riga",
        "Mon,Tue,Wed,Thu,Fri *-*-* 09:00:00 Europe/Riga",
    )
    # A day-of-month starting with '*' makes both fields count (Vixie): one line, AND.
    assert on_calendar(parse("0 9 */10 * 1"), "UTC") == ("Mon *-*-01,11,21,31 09:00:00 UTC",)


def test_it_writes_lists_never_systemd_repetitions() -> None:
    # systemd 252 fails an elapse with EDEADLK for an hour repetition (0/7) crossing into a
    # DST day in a named zone; lists and ranges of the same values do not.
    (line,) = on_calendar(parse("1/13 */7 * * *"), "America/New_York")
    assert "/" not in line.split(" ")[1]
    assert line == "*-*-* 00,07,14,21:01,14,27,40,53:00 America/New_York"


@needs_systemd
def test_it_names_the_spring_forward_gap_and_refuses_it_without_lossy() -> None:
    schedule = _schedule("30 2 * * *", "America/New_York")
    with pytest.raises(ExportError, match="spring-forward gap"):
        export_schedule(schedule, ExportTarget.systemd)
    export = export_schedule(schedule, ExportTarget.systemd, lossy=True)
    assert any("spring-forward gap" in item for item in export.dropped)
    # The difference named is real: systemd has no elapse on 2024-03-10, Debian's rule fires.
    base = datetime(2024, 3, 9, 17, 0, tzinfo=UTC)
    (elapses,) = systemd_elapses(["*-*-* 02:30:00 America/New_York"], base)
    assert elapses[0] == datetime(2024, 3, 11, 6, 30, tzinfo=UTC)


def test_it_names_the_repeated_hour_for_a_wildcard_job_only() -> None:
    wildcard = export_schedule(
        _schedule("*/30 * * * *", "Europe/Riga"), ExportTarget.systemd, lossy=True
    )
    assert any("repeated hour" in item for item in wildcard.dropped)
    fixed = export_schedule(_schedule("30 3 * 10 *", "Europe/Riga"), ExportTarget.systemd)
    assert fixed.dropped == ()


def test_it_exports_a_zone_without_dst_with_nothing_dropped() -> None:
    export = export_schedule(_schedule("*/5 * * * *", "Asia/Shanghai"), ExportTarget.systemd)
    assert export.dropped == ()
    timer = export.files[0].text
    assert "OnCalendar=*-*-* *:00,05,10,15,20,25,30,35,40,45,50,55:00 Asia/Shanghai" in timer
    assert "Persistent=true" in timer


def test_it_refuses_policies_systemd_cannot_express_and_lists_them_when_lossy() -> None:
    schedule = _schedule(
        "0 * * * *",
        policies=Policies(
            overlap=Overlap.queue, catch_up=CatchUp.skip, catch_up_within=timedelta(hours=1)
        ),
    )
    with pytest.raises(ExportError) as error:
        export_schedule(schedule, ExportTarget.systemd)
    for word in ("queue", "catch-up 'skip'", "catch-up window"):
        assert word in str(error.value)
    assert len(export_schedule(schedule, ExportTarget.systemd, lossy=True).dropped) == 3


def test_it_references_secrets_and_never_writes_them() -> None:
    action = CommandAction(argv=("/usr/bin/backup",), secret_env=(("TOKEN", "backup-token"),))
    schedule = _schedule("0 3 * * *", action=action)
    system = export_schedule(schedule, ExportTarget.systemd, system=True, user="backup")
    service = system.files[1].text
    assert "LoadCredential=backup-token:/etc/credstore/domi-desktop/backup-token" in service
    assert "$$CREDENTIALS_DIRECTORY" in service
    user = export_schedule(schedule, ExportTarget.systemd).files[1].text
    assert "secret-tool lookup service domi-desktop username backup-token" in user


def _write(tmp_path: Path, schedule: Schedule, **kwargs: object) -> list[Path]:
    export = export_schedule(schedule, ExportTarget.systemd, lossy=True, **kwargs)  # type: ignore[arg-type]
    paths = []
    for file in export.files:
        path = tmp_path / file.name
        path.write_text(file.text)
        paths.append(path)
    return paths


def _verify(paths: list[Path], tmp_path: Path, *, user: bool) -> subprocess.CompletedProcess[str]:
    assert SYSTEMD_ANALYZE is not None
    # verify runs without systemd as PID 1; a user manager only needs a runtime directory.
    runtime = tmp_path / "runtime"
    runtime.mkdir(exist_ok=True)
    return subprocess.run(
        [SYSTEMD_ANALYZE, "verify", "--man=no", *(["--user"] if user else []), *map(str, paths)],
        capture_output=True,
        text=True,
        env={**os.environ, "XDG_RUNTIME_DIR": str(runtime), "SYSTEMD_LOG_COLOR": "0"},
        check=False,
    )


TRICKY = CommandAction(
    shell='echo "100% $HOME" \\ `date` > /tmp/out; printf %s\\n "$1"',
    cwd="/tmp/a dir %h",
    env=(("GREETING", 'say "hi" 50% $x'),),
    secret_env=(("TOKEN", "api-token"),),
    stdin="line 1\nline 2 % $\n",
)


@needs_systemd
@pytest.mark.parametrize("user", [True, False])
def test_systemd_analyze_verify_accepts_the_units(tmp_path: Path, user: bool) -> None:
    tmp_path.joinpath("a dir %h").mkdir()
    schedule = _schedule(
        "0 9 1,15 * mon-fri",
        "Europe/Riga",
        action=TRICKY,
        policies=Policies(timeout=timedelta(minutes=5), jitter=timedelta(seconds=30)),
    )
    paths = _write(tmp_path, schedule, system=not user, user=None)
    result = _verify(paths, tmp_path, user=user)
    assert result.returncode == 0, result.stderr
    # verify only warns about a line it ignores: any such warning is a failure here.
    assert "ignoring" not in result.stderr.lower(), result.stderr


@needs_systemd
def test_systemd_analyze_verify_accepts_an_http_action(tmp_path: Path) -> None:
    action = HttpAction(
        url="https://example.org/hook?a=1&b=%20",
        method="POST",
        headers=(("Content-Type", "application/json"),),
        secret_headers=(("Authorization", "hook-token"),),
        body='{"x": "50%"}',
    )
    paths = _write(tmp_path, _schedule("*/15 * * * *", action=action))
    result = _verify(paths, tmp_path, user=True)
    assert result.returncode == 0, result.stderr
    assert "ignoring" not in result.stderr.lower(), result.stderr


@needs_systemd
def test_systemd_runs_the_exec_line_as_the_argv_domi_would(tmp_path: Path) -> None:
    """The quoting round trip: systemd-analyze cat-config is not enough, so ask systemd's own
    parser through `systemd-analyze verify` of a unit that would fail on a split word."""
    service = export_schedule(_schedule("0 0 * * *", action=TRICKY), ExportTarget.systemd).files[1]
    exec_line = next(line for line in service.text.splitlines() if line.startswith("ExecStart="))
    words = _unit_words(exec_line.removeprefix("ExecStart="))
    assert words[:2] == ["/bin/sh", "-c"]
    assert words[-3:] == ["/bin/sh", "-c", TRICKY.shell]


def _unit_words(text: str) -> list[str]:
    """Split an Exec line the way systemd does for double-quoted words, undoing %% and $$."""
    words, i = [], 0
    while i < len(text):
        if text[i] == " ":
            i += 1
            continue
        assert text[i] == '"', text[i:]
        i += 1
        word = []
        while text[i] != '"':
            if text[i] == "\\":
                word.append({"n": "\n", "t": "\t"}.get(text[i + 1], text[i + 1]))
                i += 2
            elif text[i] in "%$" and text[i + 1] == text[i]:
                word.append(text[i])
                i += 2
            else:
                word.append(text[i])
                i += 1
        words.append("".join(word))
        i += 1
    return words
