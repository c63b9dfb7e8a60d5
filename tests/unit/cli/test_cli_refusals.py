"""A command line the CLI refuses says why in one line on stderr and exits 2, whichever command
and whichever value: argparse's own refusals too, with no usage block before them."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from domi_desktop.cli.parser import COMMANDS, build_parser
from tests.unit.cli import test_commands as test_cli_commands
from tests.unit.cli.test_commands import Run

# The CLI fixtures of test_cli_commands, shared: a data dir, no app running, main() in-process.
data, run, bad = test_cli_commands.data, test_cli_commands.run, test_cli_commands.bad


def commands() -> Iterator[list[str]]:
    """Every command as typed: ``runs``, ``schedule add``, ``store migrate``..."""

    def leaves(parser: argparse.ArgumentParser, path: list[str]) -> Iterator[list[str]]:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield from leaves(sub, [*path, name])
                return
        yield path

    for name in COMMANDS:
        yield from leaves(build_parser(name), [])


def one_line(stderr: str) -> str:
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["timeline", "--days", "seven"], "domi-desktop timeline: argument --days: invalid int"),
        (["runs", "--limit", "abc"], "domi-desktop runs: argument --limit: invalid int value"),
        (["preview", "0 9 * * *", "-n", "abc"], "domi-desktop preview: argument -n: invalid int"),
        (["schedule", "show"], "domi-desktop schedule show: the following arguments are required"),
        (["schedule"], "domi-desktop schedule: the following arguments are required: ACTION"),
        (["export", "--to", "cron"], "domi-desktop export: argument --to: invalid choice"),
        (["--data-dir"], "domi-desktop: argument --data-dir: expected one argument"),
        (["schedule", "list", "a\nb"], "domi-desktop: unrecognized arguments: a\\nb"),
    ],
)
def test_an_argparse_refusal_is_one_line_and_exit_2(
    bad: Callable[..., str], args: list[str], said: str
) -> None:
    line = one_line(bad(*args))
    assert line.startswith(said)
    assert line.endswith("--help)")


@pytest.mark.parametrize("command", list(commands()), ids=" ".join)
def test_every_command_refuses_an_unknown_option_or_a_missing_argument_in_one_line(
    bad: Callable[..., str], command: list[str]
) -> None:
    line = one_line(bad(*command, "--bogus"))
    assert "unrecognized arguments: --bogus" in line or "arguments are required" in line


def test_help_still_shows_the_usage_and_every_option(run: Run) -> None:
    done = run("timeline", "--help")
    assert done.returncode == 0 and not done.stderr
    assert done.stdout.startswith("usage: domi-desktop timeline [-h]")
    assert "--days N" in done.stdout and "how far back (7)" in done.stdout


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["schedule", "add", "x", "--cron", "@daily", "--http", "http://[::1"],
         "domi-desktop: action: bad URL 'http://[::1': Invalid IPv6 URL"),
        (["schedule", "add", "x", "--cron", "@daily", "--webhook", "http://[::1", "--", "true"],
         "domi-desktop: policies.monitor.webhook: must be an http:// or https:// URL"),
        (["schedule", "add", "x", "--cron", "@daily", "--healthchecks", "http://[::1", "--", "true"],
         "domi-desktop: policies.monitor.healthchecks_url: must be an http:// or https:// URL"),
        (["--store", "postgresql://me:pw@[::1", "schedule", "list"],
         "domi-desktop: --store: not a URL (Invalid IPv6 URL)"),
        (["schedule", "add", "x", "--cron", "@daily", "--at-login", "--min-interval", "9" * 23,
          "--", "true"],
         "domi-desktop: policies.session.min_interval: must be longer than zero and at most 10"),
        (["simulate", "0 9 * * *", "--last-due", "2024-06-04T09:00", "--wake", "2024-06-05T10:00",
          "--wait-at-most", "9" * 23],
         "domi-desktop: policies.conditions.wait_at_most: must be a number of seconds >= 0"),
        (["import-crontab", __file__, "--encoding", "\udcff"],
         "domi-desktop: --encoding: '\\udcff' is not a text encoding Python knows"),
        (["--data-dir", "/tmp/\udcff", "status"],
         "domi-desktop: argument --data-dir: b'/tmp/\\xff' is not UTF-8"),
        (["export", "--output", "a\nb"],
         "domi-desktop export: argument -o/--output: 'a\\nb' holds a control character"),
        (["import", "no\x00such"], "domi-desktop: cannot read 'no\\x00such': no file name holds"),
    ],
)  # fmt: skip
def test_a_bad_value_is_one_line_naming_it(
    bad: Callable[..., str], args: list[str], said: str
) -> None:
    line = one_line(bad(*args))
    assert line.startswith(said)
    assert "pw" not in line  # the store's password is never echoed


@pytest.mark.parametrize(
    ("document", "said"),
    [
        ("[" * 100_000 + "]" * 100_000, "{file}: nested too deeply to be an export"),
        ('{"version": ' + "9" * 5000 + "}",
         "{file}: holds a number of more than 4300 digits; not an export"),
        ('{"format": "domi-desktop/schedules", "version": true, "schedules": []}',
         "document.version: True is not supported (this version reads 1)"),
        ('{"format": "domi-desktop/schedules", "version": 1.0, "schedules": []}',
         "document.version: 1.0 is not supported (this version reads 1)"),
    ],
)  # fmt: skip
def test_an_import_that_is_no_export_is_one_line(
    bad: Callable[..., str], tmp_path: Path, document: str, said: str
) -> None:
    export = tmp_path / "export.json"
    export.write_text(document)
    refused = one_line(bad("import", str(export), "--dry-run"))
    assert refused == "domi-desktop: " + said.format(file=export)
