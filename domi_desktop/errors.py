"""One error root: every error a user can cause is a ``DomiError``; each package has its subclass."""

from __future__ import annotations


class DomiError(Exception):
    """Root of every error domi-desktop raises on purpose; its message is meant for the user."""


class CronError(DomiError, ValueError):
    """A cron expression that cannot be used.

    ``field`` names the field at fault (``"minute"``, ``"day-of-week"``...) or is ``None`` when the
    whole expression is; ``span`` is the (start, end) offset of the offending text as typed.
    """

    def __init__(
        self, message: str, *, field: str | None, span: tuple[int, int], text: str
    ) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.span = span
        self.text = text


class ZoneError(DomiError, ValueError):
    """An unknown or unusable time zone name."""


class StoreError(DomiError):
    """The database cannot be opened, read or migrated."""


class StoreUnavailable(StoreError):
    """The database cannot take this write now, and may later: another process holds its write
    lock, the disk is full, the shared store's server cannot be reached. Nothing was written:
    the same transaction may be tried again."""


class NotFoundError(DomiError, LookupError):
    """A schedule or run id that does not exist."""


class BusyError(DomiError):
    """What was asked would start a second copy of a job that its overlap policy keeps alone."""


class SecretError(DomiError):
    """A secret cannot be stored or read (no keyring backend, locked keyring, unknown name)."""


class ActionError(DomiError):
    """An action definition that cannot run (empty command, bad URL, bad env spec...)."""


class ParamError(DomiError, ValueError):
    """A request parameter that is missing, of the wrong type or invalid; ``param`` names it."""

    def __init__(self, param: str, message: str) -> None:
        super().__init__(f"{param}: {message}")
        self.param = param


class UsageError(DomiError):
    """A command line that cannot be carried out; printed as one line, exit 2."""


class AppError(DomiError):
    """The running app cannot be reached or answered with an error."""


class ExportError(DomiError):
    """A schedule that a target scheduler cannot express (without ``--lossy``); says what and why."""
