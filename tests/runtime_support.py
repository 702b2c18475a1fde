"""Shared fixtures data for runtime-level tests (no tests here)."""

from __future__ import annotations

from datetime import UTC, datetime

START = datetime(2023, 5, 8, 9, 0, tzinfo=UTC)

# Eight LoCoMo-style turns, each about a different thing, so recall can tell them apart.
LINES = [
    ("Caroline", "I moved here from Sweden four years ago."),
    ("Melanie", "My kids and I went camping at the lake last weekend."),
    ("Caroline", "I started a pottery class with my friend Jolene."),
    ("Melanie", "I painted a sunrise over the ocean for my living room."),
    ("Caroline", "The adoption agency called me back about the interview."),
    ("Melanie", "We finally bought a violin for my daughter."),
    ("Caroline", "I ran a charity race for mental health on Saturday."),
    ("Melanie", "The museum trip with the kids was wonderful."),
]
