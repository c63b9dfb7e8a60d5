"""The tray's "When the running jobs finish: sleep": armed and cancelled here, said in a
notification with a Cancel button; the engine decides (``runtime.sleep_when_done``)."""

from __future__ import annotations

from collections.abc import Callable

from domi_desktop.model import WakeReason
from domi_desktop.platform.notify import Notice
from domi_desktop.ui.backend import Engine
from domi_desktop.ui.i18n import register, tr

CANCEL = "cancel-sleep"
"""The notification button's key."""

register(
    "zh",
    {
        "When the running jobs finish: sleep": "正在运行的任务结束后：睡眠",
        "The computer will sleep when the running jobs finish": "正在运行的任务结束后电脑将进入睡眠",
        "Unless you use it meanwhile.": "除非在此期间你使用了它。",
        "Cancel": "取消",
    },
)


class SleepWhenDoneAction:
    def __init__(self, engine: Callable[[], Engine], notify: Callable[[Notice], None]) -> None:
        self._engine, self._notify = engine, notify
        self.armed = False

    def set(self, on: bool) -> None:
        self.armed = on
        self._engine().sleep_when_done(on)
        if on:
            self._notify(
                Notice(
                    tr("The computer will sleep when the running jobs finish"),
                    tr("Unless you use it meanwhile."),
                    buttons=((CANCEL, tr("Cancel")),),
                )
            )

    def acted(self, key: str) -> bool:
        """A notification's button; True when it was ours."""
        if key != CANCEL:
            return False
        self.set(False)
        return True

    def woke(self, reason: WakeReason) -> None:
        # Back from the sleep it asked for (or any other): the arming is spent.
        if reason is WakeReason.resume:
            self.armed = False
