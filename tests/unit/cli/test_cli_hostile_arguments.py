"""Hostile values in every option and argument of every command, through ``cli.main`` in-process
as a terminal would see it (stdout strict UTF-8, stderr with backslash escapes): each call ends
with a documented exit code, never a traceback, and a refusal (exit 2) is one line on stderr, or
a cron expression's line and its caret under the span."""

from __future__ import annotations

import argparse
import io
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path

import pytest

from domi_desktop.cli import main
from domi_desktop.cli.parser import COMMANDS, build_parser

HOSTILE = (
    "", "abc", "-1", "0", "1e400", "nan", "9" * 23, "9" * 5000, "http://[::1",
    "\udcff",  # a byte of argv that is not UTF-8
    "a\x00b", "a\nb", "\u202e", "x" * 5000,
)  # fmt: skip
"""What people and scripts pass by mistake: words for numbers, overflowing numbers, broken URLs,
bytes that are not UTF-8, control characters, the very long."""

NEEDS = {
    ("schedule", "add"): ["--cron", "@daily"],
    ("simulate",): ["--last-due", "2024-06-04T09:00", "--wake", "2024-06-05T10:00"],
}
"""The options a command needs to reach its handler (a hostile one given after wins)."""
POSITIONAL = {"id": "1", "expr": "0 9 * * *", "name": "n", "file": "-", "span": "1h"}
AWAY = {("conditions",)}
"""Commands that read the machine's network and power through Qt: not of this test."""
EXIT_CODES = {0, 1, 2, 3}
"""0 done, 1 a run or a stream that failed, 2 refused, 3 no app running (README)."""


def commands() -> Iterator[tuple[str, ...]]:
    def leaves(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield from leaves(sub, (*path, name))
                return
        yield path

    for name in COMMANDS:
        yield from (path for path in leaves(build_parser(name), ()) if path not in AWAY)


def hostile_calls(command: tuple[str, ...]) -> Iterator[list[str]]:
    """The command with each of its positionals, options and the global options hostile."""
    parser = build_parser(command[0])
    for word in command:
        parser = next(
            a.choices[word] for a in parser._actions if isinstance(a, argparse._SubParsersAction)
        )
    positionals = [a for a in parser._actions if not a.option_strings and a.nargs != "*"]
    words = [POSITIONAL[a.dest] for a in positionals]
    needs = NEEDS.get(command, [])
    job = ["--", "true"] if command == ("schedule", "add") else []
    for index in range(len(words)):
        for value in HOSTILE:
            yield [*command, *words[:index], value, *words[index + 1 :], *needs, *job]
    options = [a for a in parser._actions if a.option_strings and a.nargs != 0]
    for action in options:
        for value in HOSTILE:
            yield [*command, *words, *needs, action.option_strings[-1], value, *job]
    for option in ("--data-dir", "--store", "--machine"):
        for value in HOSTILE:
            yield [option, value, *command, *words, *needs, *job]


def is_a_caret(lines: list[str]) -> bool:
    """A cron expression's refusal: the reason, the expression, the caret under the span."""
    return len(lines) == 3 and lines[1].startswith("  ") and set(lines[2].strip()) == {"^"}


@pytest.fixture
def terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A data dir with one schedule, no app, and the working directory a scratch one (``export
    -o`` writes there)."""
    monkeypatch.setenv("DOMI_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    monkeypatch.delenv("DOMI_STORE", raising=False)
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    (tmp_path / "run").mkdir(mode=0o700)
    scratch = tmp_path / "cwd"
    scratch.mkdir()
    monkeypatch.chdir(scratch)
    assert call(["schedule", "add", "base", "--cron", "0 9 * * *", "--", "true"])[0] == 0
    yield


def call(argv: list[str]) -> tuple[int | str, str]:
    """The exit code (or the exception that escaped) and what was written on stderr."""
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict")
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="backslashreplace")
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin = io.TextIOWrapper(io.BytesIO(b""), encoding="utf-8")
    sys.stdout, sys.stderr = out, err
    try:
        code: int | str = main(argv)
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 2
    except Exception as error:  # what the test is for: it ends the CLI with a traceback
        code = "".join(traceback.format_exception_only(error)).strip()
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
        err.flush()
    return code, err.buffer.getvalue().decode("utf-8")  # type: ignore[attr-defined]


@pytest.mark.posix_only  # a byte that is not UTF-8 reaches argv only on POSIX
@pytest.mark.parametrize("command", list(commands()), ids=" ".join)
def test_hostile_values_end_in_a_documented_exit_and_one_line(
    terminal: None, command: tuple[str, ...]
) -> None:
    wrong = []
    for argv in hostile_calls(command):
        code, stderr = call(argv)
        lines = stderr.splitlines()
        if code not in EXIT_CODES or "Traceback" in stderr:
            wrong.append(f"{argv!r:.160}: {code!s:.200}")
        elif code == 2 and len(lines) != 1 and not is_a_caret(lines):
            wrong.append(f"{argv!r:.160}: {len(lines)} lines: {stderr!r:.200}")
    assert not wrong, "\n".join(wrong)
