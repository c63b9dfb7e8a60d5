"""A clean Debian 12 root for the .deb's install test, made by mmdebstrap and cached by input hash.

    python packaging/linux/debroot.py [--include PKG,PKG...]     # prints the cached root's path

The root is ``mmdebstrap --variant=apt`` of bookworm (Essential, apt, nothing else) plus
``passwd`` (useradd, for the normal user the app runs as) and the packages named by ``--include``:
the test passes the .deb's own ``Depends``, so the root has what the package declares and nothing
more; apt then installs the .deb from its repository offline, and a dependency the package forgot
to declare is missing in the root, where the app fails to start. The root is kept as a folder,
``.deb-root/bookworm-<hash>/`` (like ``.wine-kit/``), the hash of the suite, the mirror, the package
list and this file: a rerun with the same inputs copies it (a few seconds instead of a minute to
fetch and install); the tests never change the cached folder itself. DOMI_DEB_ROOT_CACHE names
another cache folder.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("DOMI_DEB_ROOT_CACHE", REPO / ".deb-root"))
SUITE = "bookworm"
MIRROR = os.environ.get("DOMI_DEBIAN_MIRROR", "http://deb.debian.org/debian")
BASE = ("passwd",)
KEEP = 3  # cached roots kept; older ones are removed when a new one is made


def digest(include: list[str]) -> str:
    text = json.dumps(
        {"suite": SUITE, "mirror": MIRROR, "include": sorted({*BASE, *include})}, sort_keys=True
    )
    return hashlib.sha256(text.encode() + Path(__file__).read_bytes()).hexdigest()[:16]


def cached_root(include: list[str]) -> Path:
    """The cached root folder for ``include``; made now if there is none (one maker at a time)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    root = CACHE / f"bookworm-{digest(include)}"
    with (CACHE / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two test runs at once make it once
        if root.is_dir():
            return root
        partial = CACHE / f"partial-{root.name}"
        shutil.rmtree(partial, ignore_errors=True)  # a make interrupted while it was being made
        subprocess.run(
            ["mmdebstrap", "--quiet", "--variant=apt", "--mode=root",
             f"--include={','.join(sorted({*BASE, *include}))}",
             SUITE, str(partial), MIRROR],
            check=True,
        )  # fmt: skip
        partial.rename(root)  # whole or absent: an interrupted make leaves no half root
        for old in sorted(CACHE.glob("bookworm-*"), key=lambda p: p.stat().st_mtime)[:-KEEP]:
            shutil.rmtree(old)
    return root


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--include", default="", help="packages to add, comma separated")
    args = parser.parse_args(argv)
    print(cached_root([name for name in args.include.split(",") if name]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
