"""Kubernetes export: the CronJob validates against the official schema offline
(kubernetes-validate), and the policies map to its fields."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import kubernetes_validate  # type: ignore[import-untyped]
import pytest

from domi_desktop.export import ExportError, ExportTarget, export_schedule
from domi_desktop.model import (
    CatchUp,
    CommandAction,
    HttpAction,
    Overlap,
    Policies,
    Schedule,
)

K8S_VERSION = "1.33.0"


def _manifest(schedule: Schedule, lossy: bool = False) -> dict[str, Any]:
    (file,) = export_schedule(schedule, ExportTarget.k8s, lossy=lossy).files
    manifest: dict[str, Any] = json.loads(file.text)
    kubernetes_validate.validate(manifest, K8S_VERSION, strict=True)
    return manifest


def test_it_validates_and_maps_the_policies() -> None:
    action = CommandAction(
        argv=("/app/report", "--all"), cwd="/app", env=(("A", "1"),), secret_env=(("TOKEN", "api"),)
    )
    policies = Policies(
        overlap=Overlap.replace, catch_up_within=timedelta(minutes=10), timeout=timedelta(hours=1)
    )
    manifest = _manifest(
        Schedule(5, "Report!", "0 9 * * 1-5", "Asia/Shanghai", action, policies=policies)
    )
    spec = manifest["spec"]
    assert spec["schedule"] == "0 9 * * 1-5"
    assert spec["timeZone"] == "Asia/Shanghai"
    assert spec["concurrencyPolicy"] == "Replace"
    assert spec["startingDeadlineSeconds"] == 600
    job = spec["jobTemplate"]["spec"]
    assert job["activeDeadlineSeconds"] == 3600
    (container,) = job["template"]["spec"]["containers"]
    assert container["env"][1] == {
        "name": "TOKEN",
        "valueFrom": {"secretKeyRef": {"name": "domi-desktop", "key": "api"}},
    }


def test_catch_up_skip_becomes_domi_s_grace_as_the_starting_deadline() -> None:
    schedule = Schedule(
        5,
        "r",
        "*/10 * * * *",
        "UTC",
        CommandAction(argv=("x",)),
        policies=Policies(catch_up=CatchUp.skip),
    )
    assert _manifest(schedule)["spec"]["startingDeadlineSeconds"] == 60


def test_it_writes_day_fields_kubernetes_reads_as_vixie_does() -> None:
    # '*/2' is "any" to Vixie (AND with the weekday) but not to Kubernetes' parser: written as
    # a list with a bare '*' weekday it keeps its meaning.
    schedule = Schedule(5, "r", "0 0 */2 * *", "UTC", CommandAction(argv=("x",)))
    assert (
        _manifest(schedule)["spec"]["schedule"]
        == "0 0 1,3,5,7,9,11,13,15,17,19,21,23,25,27,29,31 * *"
    )
    both = Schedule(5, "r", "0 0 */2 * 1", "UTC", CommandAction(argv=("x",)))
    with pytest.raises(ExportError, match="AND a weekday"):
        export_schedule(both, ExportTarget.k8s, lossy=True)


def test_it_refuses_the_queue_policy_unless_lossy() -> None:
    schedule = Schedule(
        5,
        "r",
        "0 * * * *",
        "UTC",
        HttpAction(url="https://example.org"),
        policies=Policies(overlap=Overlap.queue),
    )
    with pytest.raises(ExportError, match="no queue policy"):
        export_schedule(schedule, ExportTarget.k8s)
    manifest = _manifest(schedule, lossy=True)
    assert manifest["spec"]["concurrencyPolicy"] == "Forbid"
    command = manifest["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0][
        "command"
    ]
    assert command[0] == "curl" and command[-1] == "https://example.org"
