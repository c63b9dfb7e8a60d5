"""The command line run in this process (``main``), against a data dir of its own and no app to
find: the exit code, stdout and stderr of each call (the unit tests' ``cli`` fixture)."""

from __future__ import annotations

import io
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from domi_desktop.cli import main

Cli = Callable[..., tuple[int, str, str]]


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Cli:
    monkeypatch.setenv("DOMI_DATA_DIR", str(tmp_path / "data"))
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))  # no app to find there

    def call(*args: str) -> tuple[int, str, str]:
        monkeypatch.setattr(sys, "stdin", io.StringIO(""))
        try:
            code = main(list(args))
        except SystemExit as exit_:
            code = int(exit_.code or 0)
        out, err = capsys.readouterr()
        return code, out, err

    return call
