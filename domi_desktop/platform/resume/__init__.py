"""Resume-from-sleep signals: one source per OS behind one small interface.

A source only reports. The app re-plans from the wall clock on every report, so a duplicate report
is harmless, and the wall/monotonic gap detector still catches a wake that a source misses.
"""

from __future__ import annotations

import sys

from domi_desktop.platform.resume.base import UnsupportedResumeSource
from domi_desktop.ports import ResumeSource


def resume_source_for_platform(platform: str = sys.platform) -> ResumeSource:
    """The source of ``platform``; each is imported only here, so no OS loads another's modules."""
    if platform.startswith("linux"):
        from domi_desktop.platform.resume.base import EitherResumeSource
        from domi_desktop.platform.resume.kernel import KernelResumeSource
        from domi_desktop.platform.resume.linux import LogindResumeSource

        # Without logind the kernel's clock-set timer tells the resume as it happens; the gap
        # detector alone would see it only at the driver's next tick (up to a minute later).
        return EitherResumeSource(LogindResumeSource(), KernelResumeSource())
    if platform == "win32":
        from domi_desktop.platform.resume.windows import PowerWindowResumeSource

        return PowerWindowResumeSource()
    if platform == "darwin":
        from domi_desktop.platform.resume.macos import WorkspaceWakeResumeSource

        return WorkspaceWakeResumeSource()
    return UnsupportedResumeSource(platform)
