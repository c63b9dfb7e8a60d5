"""The real headless app, its recorder held at one step of the fire path until the test says go.

Run as ``python tests/runtime/paused_app.py STEP GATE``: before the recorder's first ``STEP``
transaction (``claim``, ``start``, ``record_jobs`` or ``finish``), it creates ``GATE/paused`` and
waits for ``GATE/go``; the test takes a real write lock from another process in between. Nothing
else of the app is changed.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from domi_desktop.store.writer import Writer

step, gate = sys.argv[1], Path(sys.argv[2])
write = getattr(Writer, step)


def paused(self: Writer, *args: Any, **kwargs: Any) -> Any:
    (gate / "paused").touch()
    while not (gate / "go").exists():
        time.sleep(0.01)
    return write(self, *args, **kwargs)


setattr(Writer, step, paused)

from domi_desktop.cli import main  # noqa: E402

sys.exit(main(["--headless"]))
