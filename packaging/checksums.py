"""Write DIR/NAME with the SHA-256 of each release file in DIR, as ``sha256sum`` prints them.

    python packaging/checksums.py dist SHA256SUMS-linux

Standard library only: every OS's runner has Python but not the same checksum tool.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

PATTERNS = ("*.tar.gz", "*.deb", "*.dmg", "*.zip", "*-setup.exe")


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: checksums.py DIR NAME", file=sys.stderr)
        return 2
    folder, name = Path(argv[0]), argv[1]
    files = sorted({path for pattern in PATTERNS for path in folder.glob(pattern)})
    if not files:
        print(f"checksums: no release files in {folder}", file=sys.stderr)
        return 1
    lines = "".join(f"{sha256(path)}  {path.name}\n" for path in files)
    (folder / name).write_text(lines, encoding="utf-8", newline="\n")
    print(lines, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
