"""``python -m substrate verify|dump|stats PATH``."""

from __future__ import annotations

from .cli import main

raise SystemExit(main())
