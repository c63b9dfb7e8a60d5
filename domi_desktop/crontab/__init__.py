"""Read a crontab, user or system format, the way Debian cron reads it (crontab(5)), for import.

Every line ends up as an entry, an environment assignment, a problem, or is blank or a comment:
nothing is dropped silently. Besides what cron itself rejects, the reader warns about the traps of
the seed's field notes (003): a user-table line whose command starts with a user name, a system
line missing its user, ``%`` inside quotes, and commands that count on the login shell.

Pure: the text comes from the caller; no files, no clock, no user database (the caller passes the
user names it knows).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from itertools import islice

from domi_desktop.cron import CronError, known_zone, parse
from domi_desktop.crontab._command import (
    REBOOT_WARNING,
    entry_name,
    misplaced_percent,
    rewrite_reboot,
    shell_segments,
    split_percent,
)
from domi_desktop.errors import DomiError
from domi_desktop.model import CommandAction, Pairs


class Severity(StrEnum):
    ERROR = "error"
    """The line is not imported."""
    WARNING = "warning"
    """The line is imported, but probably does not do what it did under cron: look at it."""
    INFO = "info"
    """The line is imported; a difference from cron worth knowing, usually harmless."""


MAX_CHARACTERS = 2_000_000
"""Longer text is refused whole: the biggest real crontabs are a few kilobytes, and a cut-off
last line would import a different command."""


_FIELD = re.compile(r"[^ \t]+")
"""cron separates the time fields, the user and the command with spaces and tabs only."""

_C_SPACE = " \t\n\v\f\r"
"""C's isspace(): what cron's environment-line parser skips around names and values."""

_ENV_LINE = re.compile(r"[ \t\v\f]*([^ \t\v\f\r=]+)[ \t\v\f\r]*=(.*)")
"""cron takes any line of the form ``NAME = value`` as an assignment (time fields never hold '=')."""

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

_USER_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,31}\$?")

_TIME_FIELD = re.compile(r"[0-9*][0-9*/,-]*")

_HOME_USE = re.compile(r"(?:^|[\s=:'\"])~(?:/|\s|$)|\$\{?HOME\b")

_UNEXPANDED = re.compile(r"\$|(?:^|:)~")

_COMMAND_WORDS = frozenset(
    {
        *("echo", "printf", "cd", "test", "[", "[[", "true", "false", "sleep", "source", "."),
        *("sh", "bash", "dash", "zsh", "ksh", "python", "python2", "python3", "perl", "ruby"),
        *("node", "php", "run-parts", "env", "nice", "ionice", "nohup", "exec", "timeout"),
        *("flock", "curl", "wget", "rsync", "find", "rm", "cp", "mv", "tar", "cat", "sudo"),
    }
)

_ACCOUNT_COMMANDS = frozenset({"sync", "shutdown", "halt", "mail", "man", "lp", "uucp"})
"""System accounts named after a command (their shell is often that command): a user-table line
starting with one of them is that command, not a system line."""

_RANGE_END = re.compile(r"[0-9]{1,2}|[A-Za-z]{3}")

_CRON_SETTINGS = frozenset({"MAILTO", "MAILFROM", "CRON_TZ"})
"""Variables that configure cron itself, not the job; ``to_action`` leaves them out."""


@dataclass(frozen=True, slots=True)
class CrontabEntry:
    line: int
    """1-based line number in the file."""
    expr: str
    """The 5 time fields (or the @macro) as written, joined by single spaces."""
    command: str
    """The shell command: the text before the first unescaped ``%``, with ``\\%`` turned into ``%``."""
    stdin: str | None
    """What cron feeds the command: the text after the first unescaped ``%``, further unescaped
    ``%`` turned into newlines, ``\\%`` into ``%``, and a final newline added as cron does.
    ``None`` when the line has no unescaped ``%``."""
    user: str | None
    """The user field (system format only)."""
    env: Pairs
    """The environment assignments above the line (cron semantics: a later one replaces an
    earlier one of the same name), in the order the names first appeared."""
    name: str
    """A short human name from the command (script or program name and line), at most 60 chars."""
    tz: str | None = None
    """The schedule's zone from ``CRON_TZ`` (or else ``TZ``) above the line; ``None``: local."""
    at_login: bool = False
    """An ``@reboot`` line: its schedule runs at login only (``frontdoor.imported_policies``)."""


@dataclass(frozen=True, slots=True)
class CrontabProblem:
    line: int
    column: int | None
    """1-based column where the trouble starts (for a bad time field: the start of its span)."""
    message: str
    severity: Severity


@dataclass(frozen=True, slots=True)
class Crontab:
    entries: tuple[CrontabEntry, ...]
    problems: tuple[CrontabProblem, ...]
    assignments: tuple[tuple[int, str, str], ...] = ()
    """Every accepted environment line as (line, name, value), in file order."""


class CrontabError(DomiError):
    """Crontab text that cannot be read at all (as opposed to a bad line: a ``CrontabProblem``)."""


class _Reject(Exception):
    """A line that cannot be imported; carries the error problem's message and column."""

    def __init__(self, message: str, column: int | None) -> None:
        super().__init__(message)
        self.message = message
        self.column = column


def read_crontab(
    text: str, *, system: bool = False, known_users: frozenset[str] = frozenset()
) -> Crontab:
    """Read a crontab's text: ``system=True`` for /etc/crontab and /etc/cron.d (a user field).

    ``known_users`` are the account names of the machine, if the caller knows them: they sharpen
    the warnings about a user name in the wrong place. ``root`` always counts as known.
    """
    if len(text) > MAX_CHARACTERS:
        raise CrontabError(
            f"the crontab is longer than {MAX_CHARACTERS:,} characters; nothing was imported "
            "(a crontab that long is most likely not one: split it, or check the file)"
        )
    reader = _Reader(system, known_users | {"root"}, bool(known_users))
    # cron ends lines at '\n' only; a '\r' before it is a file edited on Windows, as is a
    # byte-order mark before the first line (Notepad's "UTF-8 with BOM").
    lines = text.removeprefix("\ufeff").split("\n")
    for number, line in enumerate(lines, start=1):
        reader.read_line(number, line.removesuffix("\r"))
    reader.check_last_line(len(lines), lines[-1])
    return Crontab(tuple(reader.entries), tuple(reader.problems), tuple(reader.assignments))


def to_action(entry: CrontabEntry) -> CommandAction:
    """The command action that runs an entry as cron would: the same shell line, stdin and
    environment, minus the variables that only configure cron (MAILTO, MAILFROM, CRON_TZ)."""
    env = tuple((name, value) for name, value in entry.env if name not in _CRON_SETTINGS)
    return CommandAction(shell=entry.command, stdin=entry.stdin, env=env)


class _Reader:
    def __init__(self, system: bool, users: frozenset[str], users_given: bool) -> None:
        self.system = system
        self.users = users
        self.users_given = users_given
        self.env: dict[str, str] = {}
        self.entries: list[CrontabEntry] = []
        self.problems: list[CrontabProblem] = []
        self.assignments: list[tuple[int, str, str]] = []

    def read_line(self, number: int, line: str) -> None:
        stripped = line.lstrip(" \t")
        if not stripped.rstrip(" \t") or stripped.startswith("#"):
            return
        if "\0" in line:
            # Nothing with a NUL can be passed to a process; most likely a binary file.
            self._problem(
                number, line.index("\0") + 1, "the line contains a NUL character", Severity.ERROR
            )
            return
        before = len(self.problems)
        try:
            match = _ENV_LINE.fullmatch(line)
            if match is not None:
                self._assign(number, match)
            else:
                self._entry(number, line)
        except _Reject as reject:
            del self.problems[before:]
            self._problem(number, reject.column, reject.message, Severity.ERROR)

    def check_last_line(self, number: int, line: str) -> None:
        """The text after the last newline: cron ignores it, so a job there never ran."""
        stripped = line.strip(" \t\r")
        if not stripped or stripped.startswith("#"):
            return
        if any(p.line == number and p.severity is Severity.ERROR for p in self.problems):
            return
        self._problem(
            number,
            len(line) + 1,
            "the last line does not end with a newline: cron ignores such a line (crontab -e "
            "refuses the file), so it never ran under cron; it is imported here, check that "
            "it is wanted",
            Severity.WARNING,
        )

    def _problem(self, line: int, column: int | None, message: str, severity: Severity) -> None:
        self.problems.append(CrontabProblem(line, column, message, severity))

    def _assign(self, number: int, match: re.Match[str]) -> None:
        name = match.group(1)
        if not _ENV_NAME.fullmatch(name):
            raise _Reject(
                f"{name!r} is not a valid environment variable name "
                "(letters, digits and '_', not starting with a digit)",
                match.start(1) + 1,
            )
        value_column = match.start(2) + 1
        value, quoted = _env_value(match.group(2), name, value_column)
        self.env[name] = value
        self.assignments.append((number, name, value))
        if name == "MAILTO" and value:
            self._problem(
                number,
                value_column,
                f"MAILTO={value}: domi-desktop does not send mail; "
                "each run's output goes to its run log instead",
                Severity.WARNING,
            )
        elif name == "SHELL" and value != "/bin/sh":
            self._problem(
                number,
                value_column,
                f"SHELL={value}: cron runs the commands below with {value}, domi-desktop runs "
                "them with /bin/sh (SHELL stays in their environment); a command that needs "
                f"{value} syntax must call it itself, e.g. {value} -c '…'",
                Severity.WARNING,
            )
        elif name in ("CRON_TZ", "TZ") and value and not known_zone(value.removeprefix(":")):
            self._problem(
                number,
                value_column,
                f"{name}={value}: unknown time zone; the entries below keep the local zone",
                Severity.WARNING,
            )
        if not quoted and " #" in value:
            self._problem(
                number,
                value_column + value.index(" #") + 1,
                f"cron keeps '#…' as part of the value of {name}: "
                "comments are not allowed on an environment line",
                Severity.WARNING,
            )
        if _UNEXPANDED.search(value):
            self._problem(
                number,
                value_column,
                f"cron does not expand $VARIABLES or ~ in environment lines: "
                f"{name} is literally {value!r}",
                Severity.WARNING,
            )

    def _entry(self, number: int, line: str) -> None:
        fields = list(islice(_FIELD.finditer(line), 7))
        reboot = rewrite_reboot(line, fields[0].start(), fields[0].end())
        if reboot is not None:
            line, fields = reboot, list(islice(_FIELD.finditer(reboot), 7))
            self._problem(number, fields[0].start() + 1, REBOOT_WARNING, Severity.WARNING)
        macro = fields[0].group().startswith("@")
        n_time = 1 if macro else 5
        n_head = n_time + (1 if self.system else 0)
        layout = _layout(macro, self.system)
        if len(fields) < n_time:
            words = f"{len(fields)} field" + ("" if len(fields) == 1 else "s")
            raise _Reject(
                f"incomplete line: {words} where {layout} are expected", fields[0].start() + 1
            )
        start = fields[0].start()
        try:
            parse(line[start : fields[n_time - 1].end()])
        except CronError as error:
            spaced = _spaced_range([field.group() for field in fields], n_time)
            if spaced is not None:
                hint = f"; a range is written without spaces: {spaced[1]}"
            elif len(fields) == n_head:
                # One word short of a whole line: a missing field shifted everything left.
                hint = f"; is a field missing? A line needs {layout}"
            else:
                hint = ""
            raise _Reject(error.message + hint, start + error.span[0] + 1) from None
        expr = " ".join(field.group() for field in fields[:n_time])
        end_column = fields[-1].end() + 1
        user: str | None = None
        if self.system:
            if len(fields) == n_time:
                raise _Reject(f"no user name and no command: a line needs {layout}", end_column)
            user = fields[n_time].group()
            if len(fields) == n_head:
                hint = ""
                if _looks_like_command(user):
                    hint = f"; {user!r} looks like a command: is the user field missing?"
                raise _Reject(f"no command after the user name {user!r}{hint}", end_column)
        elif len(fields) == n_time:
            raise _Reject(f"no command: a line needs {layout}", end_column)
        command_start = fields[n_head].start()
        raw = line[command_start:]
        command, stdin, split_at = split_percent(raw)
        if not command.strip(" \t"):
            raise _Reject(
                "the command is empty: an unescaped % starts the job's standard input",
                command_start + (split_at or 0) + 1,
            )

        segments = shell_segments(command)
        spaced = _spaced_range([field.group() for field in fields], n_time)
        if spaced is not None:
            self._problem(
                number,
                fields[spaced[0]].start() + 1,
                f"a range written with spaces? cron ends the time fields at "
                f"{fields[n_time - 1].group()!r} and takes {fields[n_time].group()!r} as the "
                f"{'user' if self.system else 'command'}: write {spaced[1]}",
                Severity.WARNING,
            )
        elif user is None:
            self._check_command_word(number, segments[0], command_start + 1)
        else:
            self._check_user(number, user, fields[n_time].start() + 1)
        percent = misplaced_percent(raw)
        if percent is not None:
            index, in_arithmetic = percent
            reason = (
                "this % is the remainder of shell arithmetic $(( … )), but cron ends the "
                "command here"
                if in_arithmetic
                else "this % ends the command"
            )
            self._problem(
                number,
                command_start + index + 1,
                f"{reason} (cron splits at an unescaped % before the shell sees the line, even "
                "inside quotes; the rest becomes standard input): "
                r"write \% for a literal %, e.g. date +\%Y-\%m-\%d or $(( n \% 7 ))",
                Severity.WARNING,
            )
        if any(segment and segment[0] in ("source", ".") for segment in segments):
            self._problem(
                number,
                command_start + 1,
                "the command sources a file: the job gets an explicit environment, not the "
                "login shell's, and runs with /bin/sh, which has '.' but may lack 'source'",
                Severity.INFO,
            )
        if "HOME" not in self.env and _HOME_USE.search(command):
            self._problem(
                number,
                command_start + 1,
                "the command uses ~ or $HOME: the job gets an explicit environment, not the "
                "login shell's; HOME is the home folder of the account running domi-desktop "
                "(set HOME=… above the line to pin it)",
                Severity.INFO,
            )
        self.entries.append(
            CrontabEntry(
                line=number,
                expr=expr,
                command=command,
                stdin=stdin,
                user=user,
                env=tuple(self.env.items()),
                name=entry_name(segments, command, number),
                tz=self._zone(),
                at_login=reboot is not None,
            )
        )

    def _check_user(self, number: int, user: str, column: int) -> None:
        """Trap 2: a system line whose user field is really the start of the command; else a
        note that the job changes account."""
        if _TIME_FIELD.fullmatch(user):
            reason = (
                f"{user!r} looks like a 6th time field (cron has exactly 5: no seconds, no year)"
            )
        elif self.users_given and user not in self.users:
            reason = f"{user!r} is not a known user"
        elif user not in self.users and _looks_like_command(user):
            reason = f"{user!r} looks like a command"
        else:
            self._problem(
                number,
                column,
                f"cron runs this as {user!r}; domi-desktop runs every job as the account "
                "running the app",
                Severity.INFO,
            )
            return
        self._problem(
            number,
            column,
            f"missing user field? {user!r} is taken as the user name ({reason})",
            Severity.WARNING,
        )

    def _check_command_word(self, number: int, words: list[str], column: int) -> None:
        """Trap 1 and its cousin: the first word of a user-table command is not a command.

        A user name counts only when a command follows it: ``mail -s …`` and ``sync`` are the
        commands that share their name with a system account."""
        if not words:
            return
        word = words[0]
        if word in self.users and _followed_by_command(words):
            self._problem(
                number,
                column,
                f"looks like a system-crontab line: {word!r} would be run as a command; "
                "use --system if this is /etc/crontab or /etc/cron.d",
                Severity.WARNING,
            )
        elif _TIME_FIELD.fullmatch(word):
            self._problem(
                number,
                column,
                f"{word!r} looks like a 6th time field, but cron has exactly 5 (no seconds, "
                f"no year): {word!r} is the start of the command",
                Severity.WARNING,
            )

    def _zone(self) -> str | None:
        # CRON_TZ names the schedule's zone on purpose; TZ is the older, looser habit.
        for name in ("CRON_TZ", "TZ"):
            value = self.env.get(name, "").removeprefix(":")
            if value:
                return value if known_zone(value) else None
        return None


def _layout(macro: bool, system: bool) -> str:
    head = "a @macro" if macro else "5 time fields (minute hour day-of-month month day-of-week)"
    return f"{head}, a user name and a command" if system else f"{head} and a command"


def _env_value(text: str, name: str, column: int) -> tuple[str, bool]:
    """The value of an environment line and whether it was quoted, as cron's load_env reads it."""
    value = text.lstrip(_C_SPACE)
    column += len(text) - len(value)
    if not value:
        # cron does not take NAME= as an assignment; the line then fails as a bad entry.
        raise _Reject(f'empty value: cron needs quotes for an empty variable, {name}=""', column)
    quote = value[0]
    if quote not in "'\"":
        return value.rstrip(_C_SPACE), False
    end = value.find(quote, 1)
    if end < 0:
        raise _Reject(f"unterminated {quote} quote in the value of {name}", column)
    rest = value[end + 1 :]
    if rest.strip(_C_SPACE):
        raise _Reject(
            f"text after the closing quote in the value of {name} (cron rejects the line)",
            column + end + 1 + len(rest) - len(rest.lstrip(_C_SPACE)),
        )
    return value[1:end], True


def _followed_by_command(words: list[str]) -> bool:
    if len(words) < 2 or words[1].startswith("-"):
        return False
    return words[0] == "root" or words[0] not in _ACCOUNT_COMMANDS


def _spaced_range(words: list[str], n_time: int) -> tuple[int, str] | None:
    """A range split by blanks around its '-' (``1 - 5``, ``1 -5``, ``1- 5``) at the end of the
    time fields or inside them: the index of the word with the dash, and the range unsplit."""
    for index in range(1, min(n_time + 1, len(words))):
        word, before = words[index], words[index - 1]
        after = words[index + 1] if index + 1 < len(words) else ""
        if word == "-" and _RANGE_END.fullmatch(before) and _RANGE_END.fullmatch(after):
            return index, f"{before}-{after}"
        if word[:1] == "-" and _RANGE_END.fullmatch(before) and _RANGE_END.fullmatch(word[1:]):
            return index, before + word
        if index < n_time and word[-1:] == "-" and _RANGE_END.fullmatch(word[:-1] + after):
            return index, word + after
    return None


def _looks_like_command(word: str) -> bool:
    # Paths and options ('/', a leading '-') fail the user-name pattern already.
    return word in _COMMAND_WORDS or not _USER_NAME.fullmatch(word)
