from __future__ import annotations

import sys

from domi_desktop.cli import main

sys.exit(main())
