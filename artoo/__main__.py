"""``python -m artoo``: the ``artoo`` command line."""

import sys

from artoo.cli import main

sys.exit(main())
