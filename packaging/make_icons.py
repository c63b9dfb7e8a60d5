"""Render the app icon from ``resources/domi-desktop.svg`` for the installers of every OS.

    python packaging/make_icons.py [--out build/icons]

Writes into the output folder (default ``build/icons``, never into git):

- ``png/domi-desktop-<N>.png`` for N in 16...1024: the Linux hicolor theme sizes and the sources of
  the two containers below;
- ``domi-desktop.ico``: Windows, PNG-compressed entries 16-256 px (read by Windows Vista and later,
  by PyInstaller's ``icon=`` and by Inno Setup's ``SetupIconFile``);
- ``domi-desktop.icns``: macOS, PNG entries 16-1024 px including the @2x variants, written here in
  pure Python so the file is the same on every OS (no ``iconutil`` needed).

Qt renders the SVG (``QSvgRenderer``) on the offscreen platform: no display is needed.
"""

from __future__ import annotations

import argparse
import os
import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "resources" / "domi-desktop.svg"

PNG_SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512, 1024)
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
# Apple's OSType of each PNG entry of an .icns file, and its size in pixels.
ICNS_TYPES = (
    (b"icp4", 16),
    (b"icp5", 32),
    (b"icp6", 64),
    (b"ic07", 128),
    (b"ic08", 256),
    (b"ic09", 512),
    (b"ic10", 1024),  # 512@2x
    (b"ic11", 32),  # 16@2x
    (b"ic12", 64),  # 32@2x
    (b"ic13", 256),  # 128@2x
    (b"ic14", 512),  # 256@2x
)
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def render_pngs(svg: Path, sizes: tuple[int, ...]) -> dict[int, bytes]:
    """Each size's PNG bytes: the SVG scaled to a square of that many pixels, transparent around."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QRectF, Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    app = QGuiApplication.instance() or QGuiApplication([sys.argv[0]])
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise SystemExit(f"make_icons: {svg} is not a valid SVG")
    pngs: dict[int, bytes] = {}
    for size in sizes:
        image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        renderer.render(painter, QRectF(0, 0, size, size))
        painter.end()
        data = QByteArray()
        buffer = QBuffer(data)
        buffer.open(QIODevice.OpenModeFlag.WriteOnly)
        if not image.save(buffer, "PNG"):
            raise SystemExit(f"make_icons: Qt could not encode a {size} px PNG")
        buffer.close()
        pngs[size] = bytes(data.data())
    del app
    return pngs


def ico_bytes(pngs: dict[int, bytes]) -> bytes:
    """An .ico file: ICONDIR, one 16-byte ICONDIRENTRY per image, then the PNG images themselves."""
    sizes = sorted(pngs)
    header = struct.pack("<HHH", 0, 1, len(sizes))
    offset = len(header) + 16 * len(sizes)
    entries, images = b"", b""
    for size in sizes:
        data = pngs[size]
        side = 0 if size >= 256 else size  # 0 means 256 in the one-byte width and height
        entries += struct.pack("<BBBBHHII", side, side, 0, 0, 1, 32, len(data), offset)
        images += data
        offset += len(data)
    return header + entries + images


def icns_bytes(pngs: dict[int, bytes]) -> bytes:
    """An .icns file: ``icns`` and the total length, then (OSType, length, PNG) per entry; big-endian."""
    body = b"".join(
        kind + struct.pack(">I", 8 + len(pngs[size])) + pngs[size] for kind, size in ICNS_TYPES
    )
    return b"icns" + struct.pack(">I", 8 + len(body)) + body


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--svg", type=Path, default=SOURCE, help="the source SVG")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "icons", help="output folder")
    args = parser.parse_args(argv)
    sizes = tuple(sorted({*PNG_SIZES, *ICO_SIZES, *(size for _kind, size in ICNS_TYPES)}))
    pngs = render_pngs(args.svg, sizes)
    if not all(data.startswith(PNG_MAGIC) for data in pngs.values()):
        raise SystemExit("make_icons: Qt wrote something that is not a PNG")
    png_dir = args.out / "png"
    png_dir.mkdir(parents=True, exist_ok=True)
    for size in PNG_SIZES:
        (png_dir / f"domi-desktop-{size}.png").write_bytes(pngs[size])
    (args.out / "domi-desktop.ico").write_bytes(ico_bytes({s: pngs[s] for s in ICO_SIZES}))
    (args.out / "domi-desktop.icns").write_bytes(icns_bytes(pngs))
    print(
        f"make_icons: {len(PNG_SIZES)} PNGs, domi-desktop.ico and domi-desktop.icns in {args.out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
