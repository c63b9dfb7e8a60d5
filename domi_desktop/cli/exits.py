"""The CLI's exit codes, apart so that the front door and the light commands need nothing else."""

from __future__ import annotations

EXIT_USAGE = 2
"""Bad input of any kind: a bad expression, zone, id or option."""

EXIT_NOT_RUNNING = 3

EXIT_READER_GONE = 1
"""What read our output stopped reading (``| head -1``): what was left is unsaid, quietly."""
