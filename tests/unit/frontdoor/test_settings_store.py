from __future__ import annotations

import json
import logging
import stat
from dataclasses import asdict
from pathlib import Path

import pytest

from domi_desktop.frontdoor.settings import AppSettings, load_settings, save_settings, settings_path

CUSTOM = AppSettings(
    start_at_login=True,
    notify_late=False,
    notify_failures=False,
    notify_successes=True,
    default_zone="Europe/Berlin",
    language="zh",
)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return settings_path(tmp_path / "data")


def test_a_missing_file_gives_the_defaults_quietly(
    path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    assert load_settings(path) == AppSettings()
    assert caplog.records == []


def test_saved_settings_load_back_equal(path: Path) -> None:
    save_settings(path, CUSTOM)
    assert load_settings(path) == CUSTOM
    assert json.loads(path.read_text(encoding="utf-8"))["default_zone"] == "Europe/Berlin"


@pytest.mark.posix_only  # mode bits are a POSIX notion
def test_the_file_is_private_to_the_user_even_when_it_replaces_a_public_one(path: Path) -> None:
    path.parent.mkdir(parents=True)
    path.write_text("{}", encoding="utf-8")
    path.chmod(0o644)
    save_settings(path, CUSTOM)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_saving_leaves_no_temporary_file_behind(path: Path) -> None:
    save_settings(path, CUSTOM)
    save_settings(path, AppSettings())
    assert [entry.name for entry in path.parent.iterdir()] == [path.name]


@pytest.mark.parametrize(
    "text",
    ["{not json", "[1, 2]", '"en"', "", "\xff\xfe"],
    ids=["broken", "a list", "a string", "empty", "not utf-8"],
)
def test_a_corrupt_file_gives_the_defaults_and_a_warning(
    path: Path, caplog: pytest.LogCaptureFixture, text: str
) -> None:
    path.parent.mkdir(parents=True)
    path.write_bytes(text.encode("latin-1"))
    with caplog.at_level(logging.WARNING):
        assert load_settings(path) == AppSettings()
    assert str(path) in caplog.text


def test_an_unreadable_settings_path_gives_the_defaults(
    path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path.mkdir(parents=True)  # a directory where the file should be
    with caplog.at_level(logging.WARNING):
        assert load_settings(path) == AppSettings()
    assert "cannot read" in caplog.text


def test_unknown_keys_are_ignored(path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"language": "zh", "theme": "dark"}), encoding="utf-8")
    assert load_settings(path) == AppSettings(language="zh")
    assert caplog.records == []


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("language", "fr"),
        ("default_zone", "Mars/Olympus_Mons"),
        ("default_zone", "../../etc/passwd"),
        ("notify_late", 0),
        ("notify_failures", "yes"),
        ("start_at_login", None),
        ("language", ["zh"]),
    ],
)
def test_a_bad_value_falls_back_to_that_fields_default_only(
    path: Path, caplog: pytest.LogCaptureFixture, key: str, value: object
) -> None:
    path.parent.mkdir(parents=True)
    data = {**asdict(CUSTOM), key: value}
    path.write_text(json.dumps(data), encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        loaded = load_settings(path)
    assert getattr(loaded, key) == getattr(AppSettings(), key)
    assert {**asdict(loaded), key: getattr(CUSTOM, key)} == asdict(CUSTOM)
    assert key in caplog.text


def test_the_local_zone_is_a_valid_default_zone(path: Path) -> None:
    save_settings(path, AppSettings(default_zone="local", language="en"))
    assert load_settings(path).default_zone == "local"
