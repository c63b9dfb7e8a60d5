"""The things a job may wait for besides the network and the power: a disk, a named network, a path.

Pure like the rest of the gate: the runtime tells a ``ConditionSource`` what to watch (``wanted``),
and the source reports what it found in ``SystemState.volumes``, ``network_names`` and ``paths``.
"""

from __future__ import annotations

import ntpath
import posixpath
from collections.abc import Iterable

from domi_desktop.errors import ParamError
from domi_desktop.model import Conditions, SystemState, Volume, Wanted

ETHERNET = "ethernet"
"""The ``network_name`` of any wired connection."""

MAX_NAME = 255
LABEL_PREFIX = "LABEL="
UUID_PREFIX = "UUID="


def wanted(conditions: Iterable[Conditions]) -> Wanted:
    """What the sources must watch for these conditions, and nothing more."""
    volumes: set[str] = set()
    paths: set[str] = set()
    names = away = False
    for each in conditions:
        away = away or each.away is not None
        if each.volume is not None:
            volumes.add(each.volume)
        if each.path_exists is not None:
            paths.add(each.path_exists)
        names = names or each.network_name is not None
    return Wanted(frozenset(volumes), names, frozenset(paths), away)


def volume_matches(spec: str, volume: Volume) -> bool:
    """``LABEL=x`` matches the label, ``UUID=x`` the UUID (any case, as blkid prints it either
    way), a bare name either."""
    if spec.startswith(LABEL_PREFIX):
        return volume.label == spec.removeprefix(LABEL_PREFIX)
    if spec.startswith(UUID_PREFIX):
        return volume.uuid.lower() == spec.removeprefix(UUID_PREFIX).lower()
    return volume.label == spec or (bool(volume.uuid) and volume.uuid.lower() == spec.lower())


def mount_point(spec: str, state: SystemState) -> str | None:
    """Where the disk ``spec`` is mounted, ``None`` when it is not."""
    for volume in state.volumes:
        if volume_matches(spec, volume) and volume.mount_point:
            return volume.mount_point
    return None


def volume_name(spec: str) -> str:
    """The disk as people call it: its label, or its UUID."""
    return spec.removeprefix(LABEL_PREFIX).removeprefix(UUID_PREFIX)


def on_network(name: str, state: SystemState) -> bool:
    if name.lower() == ETHERNET:
        return ETHERNET in state.network_names
    return name in state.network_names


FIELDS = ("volume", "network_name", "path_exists")
"""The ``Conditions`` fields of the resources, in the order they are said."""


def job_environment(conditions: Conditions, state: SystemState) -> tuple[tuple[str, str], ...]:
    """What the job is told of the resources it waited for: ``DOMI_VOLUME_PATH``."""
    if conditions.volume is None:
        return ()
    where = mount_point(conditions.volume, state)
    return () if where is None else (("DOMI_VOLUME_PATH", where),)


def check_resources(conditions: Conditions, where: str) -> None:
    """``ParamError`` naming the resource condition that cannot be used."""
    for name in FIELDS:
        value = getattr(conditions, name)
        if value is None:
            continue
        if not value.strip():
            raise ParamError(f"{where}.{name}", "must not be empty")
        if len(value) > MAX_NAME * 4:
            raise ParamError(f"{where}.{name}", f"is too long ({len(value)} characters)")
        if any(ord(c) < 32 for c in value):
            raise ParamError(f"{where}.{name}", "must not hold control characters")
    volume = conditions.volume
    if volume is not None and volume in (LABEL_PREFIX, UUID_PREFIX):
        raise ParamError(f"{where}.volume", f"{volume} needs a name after the =")
    path = conditions.path_exists
    if path is not None and not (posixpath.isabs(path) or ntpath.isabs(path)):
        raise ParamError(f"{where}.path_exists", f"must be an absolute path, not {path!r}")


# -- words -----------------------------------------------------------------------------------------


def waited_for(field: str, value: str) -> str:
    """What a run waits for, in its recorded reason: "the disk Backup", "the office network",
    "/mnt/nas/ready"."""
    if field == "volume":
        return f"the disk {volume_name(value)}"
    if field == "network_name":
        if value.lower() == ETHERNET:
            return "a wired network"
        return f"the {value} network"
    return value


def gone(field: str, value: str) -> str:
    """Why a job with ``stop_if_lost`` was stopped, in the run's English reason."""
    if field == "volume":
        return f"the disk {volume_name(value)} was unplugged"
    if field == "network_name":
        return f"the machine left {waited_for(field, value)}"
    return f"{value} went away"
