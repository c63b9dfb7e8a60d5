"""The ``path_exists`` condition: a path watched through its nearest existing parent, and, as root,
a real disk image loop-mounted under it (the mount table's signal, which inotify alone misses)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from domi_desktop.platform.conditions.paths import PathWatcher, nearest_existing, watch_points
from tests.support.wine import wine_cannot

WAIT_MS = 60_000
"""A generous deadline (loaded machines); the figure is printed, not asserted."""


def test_the_nearest_existing_parent_is_watched(tmp_path: Path) -> None:
    deep = tmp_path / "a" / "b" / "flag"
    assert nearest_existing(str(deep)) == str(tmp_path)
    assert watch_points([str(deep)]) == {str(tmp_path)}
    deep.parent.mkdir(parents=True)
    deep.write_text("")
    assert watch_points([str(deep)]) == {str(deep), str(deep.parent)}


@wine_cannot(
    "a directory that a change notification holds open (QFileSystemWatcher's) stays until the "
    "handle closes, without Windows 10's POSIX delete semantics, so its parent cannot be removed "
    "(WinError 145)"
)
def test_a_file_that_appears_deep_down_is_seen(tmp_path: Path, qtbot: QtBot) -> None:
    flag = tmp_path / "nas" / "backups" / "ready"
    watcher = PathWatcher()
    watcher.set_paths(frozenset({str(flag)}))
    changes: list[float] = []
    assert watcher.start(lambda: changes.append(time.monotonic()))
    try:
        assert watcher.read() == frozenset()
        for step in (flag.parent.parent, flag.parent):
            seen = len(changes)
            step.mkdir()
            qtbot.waitUntil(lambda seen=seen: len(changes) > seen, timeout=WAIT_MS)
        seen = len(changes)
        flag.write_text("")
        qtbot.waitUntil(lambda: len(changes) > seen, timeout=WAIT_MS)
        assert watcher.read() == frozenset({str(flag)})
        seen = len(changes)
        shutil.rmtree(flag.parent.parent)
        qtbot.waitUntil(lambda: len(changes) > seen, timeout=WAIT_MS)
        assert watcher.read() == frozenset()
    finally:
        watcher.stop()


def _run(*argv: str) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True, timeout=60).stdout


@pytest.fixture
def disk_image(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """An ext4 image holding ``ready``, on a loop device, and an empty directory to mount it on."""
    if os.geteuid() != 0:
        pytest.skip("a real loop mount needs root (losetup, mount)")
    for tool in ("mkfs.ext4", "losetup", "mount", "umount"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed (make system-deps)")
    image, where = tmp_path / "backup.img", tmp_path / "mnt"
    where.mkdir()
    _run("truncate", "-s", "8M", str(image))
    _run("mkfs.ext4", "-q", "-L", "Backup", str(image))
    device = _run("losetup", "--find", "--show", str(image)).strip()
    try:
        _run("mount", device, str(where))
        (where / "ready").write_text("")
        _run("umount", str(where))
        yield device, where
    finally:
        subprocess.run(["umount", str(where)], capture_output=True, check=False)
        subprocess.run(["losetup", "-d", device], capture_output=True, check=False)


@pytest.mark.linux_only
def test_a_disk_mounted_over_the_parent_is_seen(disk_image: tuple[str, Path], qtbot: QtBot) -> None:
    device, where = disk_image
    flag = str(where / "ready")
    watcher = PathWatcher()
    watcher.set_paths(frozenset({flag}))
    changes: list[float] = []
    assert watcher.start(lambda: changes.append(time.monotonic()))
    try:
        assert watcher.read() == frozenset()
        mounted = time.monotonic()
        _run("mount", device, str(where))
        qtbot.waitUntil(
            lambda: watcher.read() == frozenset({flag}) and bool(changes), timeout=WAIT_MS
        )
        print(f"mount -> change: {changes[0] - mounted:.3f} s")
        seen = len(changes)
        _run("umount", str(where))
        qtbot.waitUntil(lambda: len(changes) > seen, timeout=WAIT_MS)
        assert watcher.read() == frozenset()
    finally:
        watcher.stop()
