"""``python -m solace ...``: the ``solace`` command."""

from __future__ import annotations

import sys

from solace.surfaces.cli.main import main

sys.exit(main())
