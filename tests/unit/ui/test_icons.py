"""Where the app finds its icons: a bundle's folder only when frozen, never the working directory."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from domi_desktop.ui import icons

SHIPPED = Path(__file__).resolve().parents[3] / "resources"


def _fake_resources(folder: Path) -> Path:
    (folder / "resources").mkdir(parents=True)
    (folder / "resources" / "domi-idle.svg").write_text("<svg/>")
    return folder / "resources"


def test_outside_a_bundle_a_resources_folder_in_the_working_directory_is_not_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_resources(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delattr(sys, "_MEIPASS", raising=False)
    assert icons.resources_dir() == SHIPPED


def test_a_frozen_app_takes_its_bundle_s_icons_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundled = _fake_resources(tmp_path / "bundle")
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path / "bundle"), raising=False)
    assert icons.resources_dir() == bundled
