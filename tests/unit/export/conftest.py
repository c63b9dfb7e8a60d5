from __future__ import annotations

import sys
from pathlib import Path

# The helpers beside the tests (systemd_calendar, task_schema) are imported by name.
sys.path.insert(0, str(Path(__file__).parent))
