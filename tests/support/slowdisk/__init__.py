"""A slow disk you can reproduce: ``slow_fsync.c`` built at bench or test time with the
machine's C compiler, preloaded into the app alone."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

SOURCE = Path(__file__).with_name("slow_fsync.c")
DELAY_ENV = "DOMI_FSYNC_DELAY_US"


def build(into: Path) -> Path | None:
    """The shim's shared object in ``into`` (built once per source text); None without a C
    compiler."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        return None
    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:12]
    library = into / f"slow_fsync-{digest}.so"
    if not library.exists():
        into.mkdir(parents=True, exist_ok=True)
        partial = library.with_suffix(".tmp")
        subprocess.run(
            [compiler, "-O2", "-shared", "-fPIC", "-o", str(partial), str(SOURCE), "-ldl"],
            check=True,
        )
        partial.replace(library)
    return library


def environment(library: Path, delay_ms: float, preload: str = "") -> dict[str, str]:
    """What to add to the app's environment so that each of its syncs takes ``delay_ms`` more;
    ``preload`` is what it preloads already (libfaketime), kept after the shim."""
    return {
        "LD_PRELOAD": ":".join(part for part in (str(library), preload) if part),
        DELAY_ENV: str(round(delay_ms * 1000)),
    }
