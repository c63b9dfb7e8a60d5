"""Task Scheduler export: the task XML validates against Microsoft's published Task Scheduler
schema (assembled from its per-type documentation pages, see task_schema.py)."""

from __future__ import annotations

import random
from datetime import timedelta
from pathlib import Path

import pytest
import xmlschema
from systemd_calendar import random_expression
from task_schema import assemble, docs_git_dir

from domi_desktop.cron import parse
from domi_desktop.export import ExportError, ExportTarget, export_schedule
from domi_desktop.export._windows import time_runs
from domi_desktop.model import CommandAction, Overlap, Policies, Schedule


@pytest.fixture(scope="module")
def schema(tmp_path_factory: pytest.TempPathFactory) -> xmlschema.XMLSchema11:
    git_dir = docs_git_dir()
    if git_dir is None:
        pytest.skip("no MicrosoftDocs/win32 checkout: set DOMI_WIN32_DOCS to its git directory")
    path: Path = tmp_path_factory.mktemp("xsd") / "task.xsd"
    path.write_text(assemble(git_dir))
    # The pages put maxOccurs > 1 inside xs:all, which XML Schema 1.1 allows.
    return xmlschema.XMLSchema11(str(path))


def test_it_validates_against_the_task_scheduler_schema(schema: xmlschema.XMLSchema11) -> None:
    rng = random.Random(3)
    valid = 0
    policies = Policies(
        overlap=Overlap.replace, timeout=timedelta(hours=2), retries=2, jitter=timedelta(seconds=45)
    )
    while valid < 100:
        expr = random_expression(rng)
        action = CommandAction(argv=("C:\\Tools\\job.exe", "a b", 'q"uote'), cwd="C:\\Work")
        schedule = Schedule(
            8, "Job <&>", expr.text, rng.choice(("UTC", "local")), action, policies=policies
        )
        try:
            (file,) = export_schedule(schedule, ExportTarget.windows_task, lossy=True).files
        except ExportError:
            continue  # too many triggers, or an AND of two restricted day fields
        schema.validate(file.text)
        valid += 1


def test_it_cuts_times_of_day_into_few_repeating_triggers() -> None:
    assert time_runs(parse("*/5 9-17 * * *")) == [(540, 5, 108)]
    assert time_runs(parse("0,30 9,12 * * *")) == [(540, 180, 2), (570, 180, 2)]


def test_it_refuses_secrets_even_when_lossy() -> None:
    action = CommandAction(argv=("job.exe",), secret_env=(("T", "tok"),))
    with pytest.raises(ExportError, match="secrets"):
        export_schedule(
            Schedule(8, "j", "0 9 * * *", "local", action), ExportTarget.windows_task, lossy=True
        )
