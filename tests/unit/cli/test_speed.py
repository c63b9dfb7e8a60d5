"""The CLI stays quick: what ``status``, ``quit`` and ``events`` import with no app running,
and that building one command's parser changes nothing a user sees. No timings here (they belong
to bench/wake_bench.py): the modules loaded are what a slow start-up is made of, and they do not
depend on the machine's load.
"""

from __future__ import annotations

import argparse
import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from domi_desktop.cli.parser import COMMANDS, build_parser, handler_of, parse

HEAVY = (
    # ours: the database, the engine, the service, the socket client
    "domi_desktop.store", "domi_desktop.cron", "domi_desktop.scheduler", "domi_desktop.frontdoor.service",
    "domi_desktop.frontdoor.rpc.client", "domi_desktop.frontdoor.rpc.peercred", "domi_desktop.cli.commands",
    "domi_desktop.cli.schedules", "domi_desktop.cli.transfer", "domi_desktop.cli.render",
    # theirs
    "peewee", "PySide6", "psutil", "keyring", "tzlocal", "platformdirs",
    # the standard library's slower modules, none needed to say that no app runs
    "ctypes", "subprocess", "hashlib", "typing", "datetime", "json", "socket", "tempfile",
)  # fmt: skip

pytestmark = pytest.mark.linux_only  # the socket directory is set through XDG_RUNTIME_DIR


def loaded_by(argv: list[str], env: dict[str, str]) -> tuple[set[str], str]:
    """The modules a fresh interpreter has loaded after ``cli.main(argv)``, and what it printed."""
    code = (
        "import sys\nfrom domi_desktop.cli import main\n"
        f"main({argv!r})\n"
        "print('\\n'.join(sorted(sys.modules)), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env
    )
    return set(done.stderr.splitlines()), done.stdout


def heavy_among(modules: set[str], allowed: tuple[str, ...] = ()) -> list[str]:
    return sorted(
        name
        for name in modules
        for heavy in HEAVY
        if heavy not in allowed and (name == heavy or name.startswith(heavy + "."))
    )


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A data dir of its own and an empty, private socket directory: no app runs."""
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DOMI_", "XDG_"))}
    return {
        **clean,
        "DOMI_DATA_DIR": str(tmp_path / "data"),
        "XDG_RUNTIME_DIR": str(runtime),
        "HOME": str(tmp_path / "home"),
    }


@pytest.mark.parametrize("command", ["status", "quit", "events"])
def test_it_says_no_app_runs_without_loading_the_store_the_engine_or_anything_slow(
    command: str, env: dict[str, str]
) -> None:
    modules, out = loaded_by([command], env)
    assert "domi_desktop.cli.app_commands" in modules, "the command did not run"
    assert heavy_among(modules) == []
    if command == "status":
        assert out == f"domi-desktop is not running (data dir {env['DOMI_DATA_DIR']})\n"


def test_it_asks_platformdirs_for_the_per_user_dir_and_still_leaves_the_store_alone(
    env: dict[str, str],
) -> None:
    del env["DOMI_DATA_DIR"]
    modules, out = loaded_by(["status"], env)
    assert "platformdirs" in modules
    assert heavy_among(modules, allowed=("platformdirs", "tempfile", "typing")) == []
    assert out.startswith("domi-desktop is not running (data dir ")


def test_it_hashes_the_data_dir_only_when_a_socket_is_there_and_opens_no_client_for_another(
    env: dict[str, str],
) -> None:
    # Another data dir's app (or its leftover socket): the name tells it is not ours.
    (Path(env["XDG_RUNTIME_DIR"]) / "domi-0123456789ab.sock").touch()
    modules, out = loaded_by(["status"], env)
    assert "hashlib" in modules
    assert heavy_among(modules, allowed=("hashlib",)) == []
    assert "is not running" in out


# -- one command's parser, the same outcome ----------------------------------------------------

SAME = [
    ["status"],
    ["status", "--json"],
    ["--data-dir", "/somewhere", "status"],
    ["--data-dir=/somewhere", "--headless", "status"],
    ["--data-dir", "schedule", "status"],  # an option's value that is also a command's name
    ["--data-dir", "status"],  # and no command: the app would start
    ["--store", "postgresql://h/db", "--machine", "m", "schedule", "list", "--json"],
    ["schedule", "edit", "3", "--cron", "0 9 * * 1-5", "--run-on", "a", "--run-on", "b"],
    ["preview", "*/5 * * * *", "-n", "3"],
    ["export", "--to", "systemd", "1"],
    ["store", "migrate", "--to", "sqlite"],
    ["--headless"],
    [],
]


@pytest.mark.parametrize("words", SAME, ids=" ".join)
def test_one_commands_parser_reads_the_words_as_the_whole_grammar_does(words: list[str]) -> None:
    assert vars(parse(words)) == vars(build_parser().parse_args(words))


@pytest.mark.parametrize(
    "words",
    [
        ["status", "--bogus"],
        ["--data-dir"],
        ["schedule", "bogus"],
        ["statu"],
        ["--data-dir", "x", "schedule", "show", "one"],
    ],
    ids=" ".join,
)
def test_a_refused_line_gets_the_whole_grammars_message(
    words: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as whole:
        build_parser().parse_args(words)
    expected = capsys.readouterr()
    with pytest.raises(SystemExit) as caught:
        parse(words)
    assert caught.value.code == whole.value.code == 2
    assert capsys.readouterr() == expected


def test_help_before_the_command_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse(["-h", "status"])
    shown = capsys.readouterr().out
    assert all(re.search(rf"^    {name}\b", shown, re.MULTILINE) for name in COMMANDS)


def test_every_command_names_a_handler_that_exists() -> None:
    handlers = []
    pending: list[argparse.ArgumentParser] = [build_parser()]
    while pending:
        parser = pending.pop()
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                pending.extend(action.choices.values())
        if parser.get_default("handler") is not None:
            handlers.append(handler_of(argparse.Namespace(handler=parser.get_default("handler"))))
    assert len(handlers) == 27
    assert all(inspect.isfunction(handler) for handler in handlers)
