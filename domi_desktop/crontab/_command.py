"""The command part of a crontab line, read as /bin/sh would: cron's ``%`` rule (the rest of the
line becomes standard input), shell words and segments, the program a line runs, and a name for it."""

from __future__ import annotations

import re

NAME_LIMIT = 60

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")

_SHELL_TOKEN = re.compile(
    r"""(?P<operator>[;&|()<>]+)|(?:[^\s;&|()<>'"\\]+|\\.?|'[^']*'|"(?:[^"\\]|\\.)*")+""",
    re.DOTALL,
)
"""A shell operator, or a word: unquoted runs, backslash escapes and complete quoted strings."""

_QUOTING = re.compile(r"""'([^']*)'|"((?:[^"\\]|\\.)*)"|\\(.?)""", re.DOTALL)

_INTERPRETER = re.compile(
    r"(?:ba|da|z|k)?sh|python[0-9.]*|pypy[0-9.]*|perl|ruby|node|php[0-9.]*|Rscript|run-parts"
)

_WRAPPERS = {
    **dict.fromkeys(("exec", "nice", "ionice", "nohup", "time", "env", "chronic", "timeout"), 0),
    "flock": 1,
}

_PREAMBLE = frozenset(
    {"cd", "test", "[", "[[", "true", ":", "sleep", "source", ".", "export", "set", "umask"}
)

_RESERVED = frozenset({"{", "}", "!", "if", "then", "elif", "else", "fi", "while", "until", "do"})
"""Shell words that may start a simple command without being it (``{ cd / && run-parts …; }``)."""

_OPTION_OR_NUMBER = frozenset("-0123456789")


def split_percent(raw: str) -> tuple[str, str | None, int | None]:
    """cron's % rule: (command, stdin or None, index of the splitting % in ``raw`` or None).

    The command keeps every backslash except the one of ``\\%``: the shell handles the rest.
    """
    out: list[str] = []
    escaped = False
    for index, char in enumerate(raw):
        if escaped:
            escaped = False
            if char == "%":
                out[-1] = "%"
                continue
        elif char == "\\":
            escaped = True
        elif char == "%":
            return "".join(out), _stdin(raw[index + 1 :]), index
        out.append(char)
    return "".join(out), None, None


def _stdin(data: str) -> str:
    """The text cron writes to the job's stdin (do_command.c): ``\\%`` → ``%``, ``%`` → newline,
    any other backslash kept, and a newline at the end when the last character is not one."""
    out: list[str] = []
    escaped = need_newline = False
    for char in data:
        if escaped and char != "%":
            out.append("\\")
        written = "\n" if char == "%" and not escaped else char
        escaped = written == "\\"
        if not escaped:
            out.append(written)
            need_newline = written != "\n"
    if escaped:
        out.append("\\")
    if need_newline:
        out.append("\n")
    return "".join(out)


def misplaced_percent(raw: str) -> tuple[int, bool] | None:
    """The index of the % that ends the command when its author most likely meant it literally,
    and whether it sits in shell arithmetic: inside ``$(( … ))`` (the remainder operator),
    inside shell quotes (they do not protect it from cron), right after '+' (``date +%Y``), or
    after an escaped one (``\\%`` used, one forgotten). ``None`` otherwise."""
    cron_escaped = shell_escaped = escaped_before = False
    quote: str | None = None
    arithmetic = 0
    for index, char in enumerate(raw):
        if char == "%":
            if cron_escaped:
                escaped_before = True
            elif arithmetic or quote is not None or escaped_before:
                return index, arithmetic > 0
            elif raw[index - 1 : index] == "+":
                return index, False
            else:
                return None
        cron_escaped = char == "\\" and not cron_escaped
        if shell_escaped:
            shell_escaped = False
        elif quote == "'":
            quote = None if char == "'" else quote
        elif char == "\\":
            shell_escaped = True
        elif raw.startswith("$((", index):
            arithmetic += 1
        elif arithmetic and raw.startswith("))", index):
            arithmetic -= 1
        elif quote == '"':
            quote = None if char == '"' else quote
        elif char in "'\"":
            quote = char
    return None


def shell_segments(command: str) -> list[list[str]]:
    """The simple commands of a shell line as lists of unquoted words: a best-effort reading for
    names and hints, not a shell parser (no expansions; unbalanced quotes are skipped)."""
    segments: list[list[str]] = [[]]
    redirect_target = False
    # The first words are all a name or a hint needs; a bound keeps huge lines cheap.
    for match in _SHELL_TOKEN.finditer(command[:1000]):
        token = match.group()
        if token.startswith("#"):
            break
        if redirect_target:
            redirect_target = False
        elif match.lastgroup == "operator":
            if set(token) <= set("<>&") and ("<" in token or ">" in token):
                redirect_target = True  # the next word is a file, not a command
            else:
                segments.append([])
        else:
            segments[-1].append(_QUOTING.sub(_unquote, token))
    return segments


def _unquote(match: re.Match[str]) -> str:
    return next((group for group in match.groups() if group is not None), "")


def _program(words: list[str]) -> str | None:
    """The name of what a simple command runs, or None when it only prepares (cd, test...)."""
    index = 0
    while index < len(words):
        word = words[index]
        base = _basename(word)
        if word in _RESERVED or _ASSIGNMENT.match(word):
            index += 1
        elif base in _WRAPPERS:
            index += 1
            while index < len(words) and words[index][:1] in _OPTION_OR_NUMBER:
                index += 1
            index += _WRAPPERS[base]
        else:
            break
    if index >= len(words):
        return None
    base = _basename(words[index])
    if base in _PREAMBLE:
        return None
    if _INTERPRETER.fullmatch(base):
        for operand in words[index + 1 :]:
            if operand == "-c":  # inline code: the interpreter is the best name there is
                return base
            if not operand.startswith("-"):
                return _basename(operand)
    return base


def _basename(word: str) -> str:
    return word.rstrip("/").rsplit("/", 1)[-1] or word


def entry_name(segments: list[list[str]], command: str, number: int) -> str:
    program = next((name for name in map(_program, segments) if name), None)
    if program is None:
        words = command.split()
        program = _basename(words[0]) if words else "job"
    suffix = f" (line {number})"
    label = "".join(char if char.isprintable() else "?" for char in program)
    return label[: max(NAME_LIMIT - len(suffix), 1)] + suffix


REBOOT_WARNING = (
    "@reboot runs when cron starts; imported as 'at login' instead: it runs when domi-desktop "
    "starts in your session, not at boot and not by any time"
)


def rewrite_reboot(line: str, start: int, end: int) -> str | None:
    """A line whose macro (``line[start:end]``) is ``@reboot``, with ``@yearly`` in its place
    (as long: the columns stay true), or ``None``. Its schedule is never due: it runs at login
    only (``SessionTriggers.only``)."""
    if line[start:end].lower() != "@reboot":
        return None
    return line[:start] + "@yearly" + line[end:]
