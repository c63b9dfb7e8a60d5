"""The frozen app's entry point: the same as ``python -m domi_desktop`` and the ``domi-desktop`` script."""

import sys

from domi_desktop.cli import main

if __name__ == "__main__":
    sys.exit(main())
