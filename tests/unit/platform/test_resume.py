from __future__ import annotations

import logging
import subprocess
import sys

import pytest

from domi_desktop.platform.resume import resume_source_for_platform
from domi_desktop.platform.resume.base import (
    EitherResumeSource,
    PowerCallbacks,
    UnsupportedResumeSource,
)
from domi_desktop.platform.resume.kernel import KernelResumeSource
from domi_desktop.platform.resume.linux import LogindResumeSource
from domi_desktop.platform.resume.macos import WorkspaceWakeResumeSource
from domi_desktop.platform.resume.windows import PowerWindowResumeSource


@pytest.mark.parametrize(
    ("platform", "kind"),
    [
        ("linux", EitherResumeSource),
        ("win32", PowerWindowResumeSource),
        ("darwin", WorkspaceWakeResumeSource),
        ("freebsd14", UnsupportedResumeSource),
    ],
)
def test_each_os_gets_its_own_source(platform: str, kind: type) -> None:
    assert isinstance(resume_source_for_platform(platform), kind)


def test_linux_asks_logind_first_then_the_kernel() -> None:
    source = resume_source_for_platform("linux")
    assert isinstance(source, EitherResumeSource)
    first, second = source.sources
    assert isinstance(first, LogindResumeSource) and isinstance(second, KernelResumeSource)


def test_an_os_without_a_source_says_so_and_starts_nothing() -> None:
    source = resume_source_for_platform("sunos5")
    assert not source.start(lambda: None)
    assert "no resume-from-sleep signal on sunos5" in source.status
    source.stop()


def test_no_os_source_is_loaded_until_one_is_asked_for() -> None:
    code = (
        "import sys, domi_desktop.platform.resume\n"
        "loaded = sorted(m for m in sys.modules if m.startswith(('PySide6', 'domi_desktop.platform.')))\n"
        "print(loaded)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == str(
        ["domi_desktop.platform.resume", "domi_desktop.platform.resume.base"]
    )


def test_callbacks_get_their_event_and_each_event_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls: list[str] = []
    callbacks = PowerCallbacks(
        "test", lambda: calls.append("resume"), lambda: calls.append("sleep")
    )
    with caplog.at_level(logging.INFO, logger="domi_desktop.platform.resume"):
        callbacks.deliver("sleep")
        callbacks.deliver("resume")
    assert calls == ["sleep", "resume"]
    assert [r.getMessage() for r in caplog.records] == [
        "test: the machine is going to sleep",
        "test: the machine woke from sleep",
    ]


def test_sleep_without_a_sleep_callback_is_only_logged() -> None:
    calls: list[str] = []
    PowerCallbacks("test", lambda: calls.append("resume"), None).deliver("sleep")
    assert calls == []
