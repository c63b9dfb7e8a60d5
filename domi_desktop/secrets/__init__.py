"""Secret values by name: the OS keyring for real, a dict for tests and demos; output masking.

Values live only in the keyring. Schedules, the database, logs and exports hold names; values that
show up in a job's output are masked before anything is written.
"""

from __future__ import annotations

from domi_desktop.secrets.keyring_store import KeyringSecretStore
from domi_desktop.secrets.masking import Masker, MaskingStream, mask
from domi_desktop.secrets.store import (
    MIN_SECRET_LENGTH,
    NAME_RULE,
    SERVICE,
    MemorySecretStore,
    validate_name,
)

__all__ = [
    "MIN_SECRET_LENGTH",
    "NAME_RULE",
    "SERVICE",
    "KeyringSecretStore",
    "Masker",
    "MaskingStream",
    "MemorySecretStore",
    "mask",
    "validate_name",
]
