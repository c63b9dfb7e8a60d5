"""import-crontab reads a whole file or none of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from domi_desktop.cli import main
from domi_desktop.crontab import MAX_CHARACTERS, CrontabError, read_crontab

LINE = "0 3 * * * rm -rf /home/alice/tmp/cache/build-output-old\n"


def test_a_crontab_over_the_limit_is_refused_whole_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    crontab = tmp_path / "crontab"
    padding = "#" * 99 + "\n"
    # The real command straddles the limit: a cut-off read would import 'rm -rf /home/alice/tmp/ca'.
    body = padding * ((MAX_CHARACTERS - 25) // len(padding))
    body += "#" * (MAX_CHARACTERS - 25 - len(body)) + "\n"
    crontab.write_text(body + LINE, encoding="utf-8", newline="\n")  # no CRLF on Windows
    assert len(body) < MAX_CHARACTERS < len(body + LINE)
    assert main(["import-crontab", str(crontab), "--dry-run"]) == 2
    out, err = capsys.readouterr()
    assert "longer than 2,000,000 characters; nothing was imported" in err
    assert "would import" not in out + err


def test_a_crontab_at_the_limit_is_read_to_its_last_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    crontab = tmp_path / "crontab"
    body = "#" * (MAX_CHARACTERS - len(LINE) - 1) + "\n"
    crontab.write_text(body + LINE, encoding="utf-8", newline="\n")  # no CRLF on Windows
    assert len(body + LINE) == MAX_CHARACTERS
    assert main(["import-crontab", str(crontab), "--dry-run"]) == 0
    out, err = capsys.readouterr()
    assert "would import line 2: 0 3 * * *  rm (line 2)" in out
    assert "1 would import" in err


def test_the_reader_refuses_text_over_the_limit() -> None:
    with pytest.raises(CrontabError, match="longer than 2,000,000 characters"):
        read_crontab("#" * (MAX_CHARACTERS + 1))


def test_a_file_that_only_sets_mailto_is_not_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    crontab = tmp_path / "crontab"
    crontab.write_text("MAILTO=alice@example.com\n", encoding="utf-8")
    assert main(["import-crontab", str(crontab), "--dry-run"]) == 0
    assert "does not send mail" in capsys.readouterr().err
