"""packaging/make_icons.py: the app icon as PNGs, a Windows .ico and a macOS .icns, from the SVG."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def png_size(data: bytes) -> tuple[int, int]:
    assert data.startswith(PNG_MAGIC)
    width, height = struct.unpack(">II", data[16:24])  # IHDR, the first chunk
    return width, height


@pytest.fixture(scope="module")
def icons(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("icons")
    done = subprocess.run(
        [sys.executable, str(ROOT / "packaging/make_icons.py"), "--out", str(out)],
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return out


def test_the_pngs_have_the_size_in_their_name(icons: Path) -> None:
    for size in (16, 22, 24, 32, 48, 64, 128, 256, 512, 1024):
        data = (icons / f"png/domi-desktop-{size}.png").read_bytes()
        assert png_size(data) == (size, size)


def test_the_ico_holds_one_png_per_size_up_to_256(icons: Path) -> None:
    data = (icons / "domi-desktop.ico").read_bytes()
    reserved, kind, count = struct.unpack("<HHH", data[:6])
    assert (reserved, kind, count) == (0, 1, 7)
    sizes = []
    for index in range(count):
        entry = data[6 + 16 * index : 22 + 16 * index]
        width, height, _colors, _zero, planes, bits, length, offset = struct.unpack(
            "<BBBBHHII", entry
        )
        image = data[offset : offset + length]
        side = width or 256
        assert (width, height, planes, bits) == (width, width, 1, 32)
        assert png_size(image) == (side, side)
        sizes.append(side)
    assert sizes == [16, 24, 32, 48, 64, 128, 256]


def test_the_icns_holds_every_size_apple_asks_for_including_retina(icons: Path) -> None:
    data = (icons / "domi-desktop.icns").read_bytes()
    assert data[:4] == b"icns"
    assert struct.unpack(">I", data[4:8])[0] == len(data)
    entries: dict[bytes, tuple[int, int]] = {}
    offset = 8
    while offset < len(data):
        kind, length = (
            data[offset : offset + 4],
            struct.unpack(">I", data[offset + 4 : offset + 8])[0],
        )
        entries[kind] = png_size(data[offset + 8 : offset + length])
        offset += length
    assert offset == len(data)
    expected = {b"icp4": 16, b"icp5": 32, b"icp6": 64, b"ic07": 128, b"ic08": 256, b"ic09": 512}
    expected |= {b"ic10": 1024, b"ic11": 32, b"ic12": 64, b"ic13": 256, b"ic14": 512}
    assert entries == {kind: (size, size) for kind, size in expected.items()}
