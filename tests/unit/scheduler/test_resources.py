"""Resource conditions in the pure gate: a disk, a named network and a path as conditions."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from domi_desktop.errors import ParamError
from domi_desktop.model import Conditions, OnDeadline, SystemState, Volume, Wanted
from domi_desktop.scheduler.conditions import (
    Verdict,
    check_conditions,
    gate,
    lost,
)
from domi_desktop.scheduler.resources import (
    job_environment,
    mount_point,
    volume_matches,
    wanted,
)

DUE = datetime(2026, 3, 2, 0, 0, tzinfo=UTC)
BACKUP = Volume("Backup", "1234-ABCD", "/media/me/Backup")
OTHER = Volume("Photos", "9999-0000", "/media/me/Photos")
PLUGGED = SystemState(volumes=(OTHER, BACKUP))
UNPLUGGED = SystemState(volumes=(OTHER,))


@pytest.mark.parametrize(
    ("spec", "found"),
    [
        ("Backup", True),
        ("LABEL=Backup", True),
        ("UUID=1234-abcd", True),
        ("1234-ABCD", True),
        ("LABEL=1234-ABCD", False),
        ("UUID=Backup", False),
        ("backup", False),
        ("Photo", False),
    ],
)
def test_a_disk_is_named_by_its_label_or_its_uuid(spec: str, found: bool) -> None:
    assert volume_matches(spec, BACKUP) is found


def test_a_run_waits_for_its_disk_and_says_which() -> None:
    conditions = Conditions(volume="Backup")
    waiting = gate(conditions, "command", UNPLUGGED, DUE, DUE, None)
    assert waiting.verdict is Verdict.wait
    assert waiting.reason == "waiting for the disk Backup"
    assert gate(conditions, "command", PLUGGED, DUE, DUE, None).verdict is Verdict.run


def test_another_disk_does_not_release_it() -> None:
    conditions = Conditions(volume="UUID=1234-ABCD")
    assert gate(conditions, "command", UNPLUGGED, DUE, DUE, None).verdict is Verdict.wait
    assert gate(conditions, "command", SystemState(), DUE, DUE, None).verdict is Verdict.wait


def test_a_disk_known_but_not_mounted_does_not_count() -> None:
    state = SystemState(volumes=(Volume("Backup", "1234-ABCD", ""),))
    assert mount_point("Backup", state) is None
    assert gate(Conditions(volume="Backup"), "command", state, DUE, DUE, None).verdict is (
        Verdict.wait
    )


def test_the_job_is_told_where_its_disk_is() -> None:
    assert job_environment(Conditions(volume="Backup"), PLUGGED) == (
        ("DOMI_VOLUME_PATH", "/media/me/Backup"),
    )
    assert job_environment(Conditions(volume="Backup"), UNPLUGGED) == ()
    assert job_environment(Conditions(), PLUGGED) == ()


def test_the_deadline_holds_for_a_disk_as_for_the_charger() -> None:
    conditions = Conditions(
        volume="Backup", wait_at_most=timedelta(days=3), on_deadline=OnDeadline.skip
    )
    late = DUE + timedelta(days=3)
    waiting = gate(conditions, "command", UNPLUGGED, DUE, DUE, None)
    assert waiting.until == late
    skipped = gate(conditions, "command", UNPLUGGED, DUE, late, None)
    assert skipped.verdict is Verdict.skip
    assert skipped.reason == "skipped after waiting 3 days for the disk Backup"


def test_a_named_network_and_a_wired_one() -> None:
    office = Conditions(network_name="office")
    wired = Conditions(network_name="Ethernet")
    at_home = SystemState(network_names=frozenset({"home"}))
    at_desk = SystemState(network_names=frozenset({"office", "ethernet"}))
    assert gate(office, "command", at_home, DUE, DUE, None).reason == (
        "waiting for the office network"
    )
    assert gate(office, "command", at_desk, DUE, DUE, None).verdict is Verdict.run
    assert gate(wired, "command", at_home, DUE, DUE, None).reason == "waiting for a wired network"
    assert gate(wired, "command", at_desk, DUE, DUE, None).verdict is Verdict.run


def test_a_path_must_exist() -> None:
    conditions = Conditions(path_exists="/mnt/nas/ready")
    assert gate(conditions, "command", SystemState(), DUE, DUE, None).reason == (
        "waiting for /mnt/nas/ready"
    )
    there = SystemState(paths=frozenset({"/mnt/nas/ready"}))
    assert gate(conditions, "command", there, DUE, DUE, None).verdict is Verdict.run


def test_a_disk_pulled_mid_run_stops_a_job_that_asked_for_it() -> None:
    conditions = Conditions(volume="Backup", stop_if_lost=True)
    assert lost(conditions, "command", UNPLUGGED, at_start=PLUGGED) == (
        "stopped: the disk Backup was unplugged"
    )
    assert lost(conditions, "command", PLUGGED, at_start=PLUGGED) is None
    relaxed = Conditions(volume="Backup")
    assert lost(relaxed, "command", UNPLUGGED, at_start=PLUGGED) is None


def test_only_what_waits_is_watched() -> None:
    found = wanted(
        [
            Conditions(volume="Backup"),
            Conditions(path_exists="/a"),
            Conditions(on_ac_power=True),
            Conditions(volume="UUID=1"),
        ]
    )
    assert found == Wanted(frozenset({"Backup", "UUID=1"}), False, frozenset({"/a"}))
    assert not wanted([Conditions(on_ac_power=True)])
    assert wanted([Conditions(network_name="office")]).network_names


@pytest.mark.parametrize(
    ("conditions", "field"),
    [
        (Conditions(volume=""), "c.volume"),
        (Conditions(volume="LABEL="), "c.volume"),
        (Conditions(network_name="  "), "c.network_name"),
        (Conditions(path_exists="relative/path"), "c.path_exists"),
        (Conditions(path_exists="/a\nb"), "c.path_exists"),
    ],
)
def test_bad_resources_are_named(conditions: Conditions, field: str) -> None:
    with pytest.raises(ParamError) as caught:
        check_conditions(conditions, "c")
    assert caught.value.param == field


def test_windows_paths_are_absolute_too() -> None:
    check_conditions(Conditions(path_exists="C:\\Backups\\ready"), "c")
    check_conditions(Conditions(path_exists="\\\\nas\\share"), "c")
