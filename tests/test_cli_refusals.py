"""A command line the CLI refuses says why in one line on stderr and exits 2, whichever command
and whichever value: argparse's own refusals too, with no usage block before them."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator

import pytest

from domi_desktop.cli.parser import COMMANDS, build_parser
from tests import test_cli_commands
from tests.test_cli_commands import Run

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
