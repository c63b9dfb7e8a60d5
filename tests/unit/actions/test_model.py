"""Action checks, secret resolution, the base environment and the wording of durations."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from domi_desktop.actions import (
    ActionRequest,
    ActionRunner,
    base_environment,
    check_action,
    job_environment,
    resolve_secrets,
)
from domi_desktop.actions.control import format_seconds
from domi_desktop.actions.environment import MACOS_PATH, POSIX_PATH
from domi_desktop.clock import SystemClock
from domi_desktop.errors import ActionError, SecretError
from domi_desktop.model import Action, CommandAction, HttpAction, RunStatus
from domi_desktop.secrets import MemorySecretStore


@pytest.mark.parametrize(
    ("action", "message"),
    [
        (CommandAction(), "either an argument list or a shell line"),
        (CommandAction(argv=("ls",), shell="ls"), "either an argument list or a shell line"),
        (CommandAction(argv=("",)), "program name is empty"),
        (CommandAction(shell="   "), "shell line is empty"),
        (CommandAction(argv=("echo", "a\0b")), "NUL"),
        (CommandAction(argv=("ls",), cwd=""), "working directory is empty"),
        (CommandAction(argv=("ls",), env=(("A=B", "1"),)), "bad environment variable name 'A=B'"),
        (CommandAction(argv=("ls",), env=(("", "1"),)), "bad environment variable name ''"),
        (CommandAction(argv=("ls",), env=(("A", "x\0"),)), "value of environment variable A"),
        (CommandAction(argv=("ls",), secret_env=(("T", "bad name"),)), "bad secret name"),
        (HttpAction(url="ftp://example.com/"), "only http:// and https://"),
        (HttpAction(url="http:///no-host"), "only http:// and https://"),
        (HttpAction(url="https://example.com", method="GE T"), "bad HTTP method 'GE T'"),
        (HttpAction(url="https://x.org", headers=(("Bad Name", "v"),)), "bad HTTP header name"),
        (
            HttpAction(url="https://x.org", headers=(("X-A", "v\r\nX-Evil: 1"),)),
            "contains a line break",
        ),
        (HttpAction(url="https://x.org", secret_headers=(("X-Key", "_hidden"),)), "bad secret"),
        (HttpAction(url="https://x.org", timeout=0), "bad HTTP timeout"),
    ],
)
def test_an_action_that_cannot_run_is_refused_with_a_reason(action: Action, message: str) -> None:
    with pytest.raises(ActionError, match=re.escape(message)):
        check_action(action)


@pytest.mark.parametrize(
    "action",
    [
        CommandAction(argv=("ls", "-l")),
        CommandAction(shell="echo hi | wc -c", cwd="/tmp", env=(("A", "1"),), stdin="x"),
        HttpAction(url="https://example.com/report?x=1", method="POST", body="{}"),
        HttpAction(url="http://127.0.0.1:8080", secret_headers=(("Authorization", "tok"),)),
    ],
)
def test_a_good_action_passes(action: Action) -> None:
    check_action(action)


def test_resolve_secrets_maps_each_target_to_its_value() -> None:
    store = MemorySecretStore({"api-token": "tok-abcdef", "other": "other-value"})
    command = CommandAction(argv=("true",), secret_env=(("TOKEN", "api-token"),))
    http = HttpAction(url="https://x.org", secret_headers=(("X-Key", "other"),))
    assert resolve_secrets(command, store) == {"TOKEN": "tok-abcdef"}
    assert resolve_secrets(http, store) == {"X-Key": "other-value"}
    with pytest.raises(SecretError, match="no secret named 'api-token'"):
        resolve_secrets(command, MemorySecretStore())


@pytest.mark.posix_only  # the POSIX base
def test_the_base_environment_is_small_and_fixed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANG", "de_DE.UTF-8")
    monkeypatch.setenv("TMPDIR", "/var/tmp")
    monkeypatch.setenv("PATH", "/home/me/.cargo/bin:/usr/bin")
    env = base_environment()
    assert env["PATH"] == (MACOS_PATH if sys.platform == "darwin" else POSIX_PATH)
    assert env["LANG"] == "de_DE.UTF-8"
    assert env["TMPDIR"] == "/var/tmp"
    assert env["HOME"] == os.environ["HOME"]
    assert env["USER"] == env["LOGNAME"]
    assert env["SHELL"] == "/bin/sh"
    monkeypatch.delenv("LANG")
    assert base_environment()["LANG"] == "C.UTF-8"


def test_the_action_env_overrides_the_base_and_secrets_override_both() -> None:
    action = CommandAction(argv=("true",), env=(("PATH", "/opt/tools/bin"), ("TOKEN", "plain")))
    env = job_environment(action, {"TOKEN": "from-secret"})
    assert env["PATH"] == "/opt/tools/bin"
    assert env["TOKEN"] == "from-secret"


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0.5, "0.5s"), (5, "5s"), (59.5, "59.5s"), (60, "1m"), (90, "1m30s"), (7200, "2h")],
)
def test_durations_are_short(seconds: float, text: str) -> None:
    assert format_seconds(seconds) == text


@pytest.mark.posix_only  # POSIX shells
def test_a_note_starts_on_a_line_of_its_own(tmp_path: Path) -> None:
    request = ActionRequest(
        action=CommandAction(shell="printf no-newline; exit 2"), run_id=1, log_path=tmp_path / "l"
    )
    result = ActionRunner(SystemClock()).run(request)
    assert result.status is RunStatus.failed
    assert result.output_tail == "no-newline\n[domi-desktop] exit code 2\n"
