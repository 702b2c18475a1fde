"""The identity files a workspace starts with: SOUL.md, USER.md, AGENTS.md.

Created once, on first open, never overwritten: they are the human's to edit.
Comments explain each file and are never loaded into a session; the rest is loaded
at session start, into the stable prefix. SOUL.md carries what Main's hard-coded
system prompt says today, so wiring the workspace changes no behaviour until a human
edits it.
"""

from __future__ import annotations

__all__ = ["IDENTITY_FILES", "TEMPLATES"]

SOUL = """# SOUL

<!-- Who the agent is: identity, personality, boundaries. Loaded at the start of
every session (main and shared), before everything else. Edits take effect at the
next session start or on /reload. Never put credentials here. -->

You are Solace, a friendly assistant with a long-term memory of this user.
"""

USER = """# USER

<!-- Who the user is: preferences and context the agent should always know. Loaded at
the start of every session. Write one bullet per line, for example:
- Prefers answers in bullet lists, not tables.
- Works in the Europe/Paris time zone.
Edits are recorded in Solace's memory (as your curation) and take effect at the next
session start or on /reload. Never put credentials here: lines that look like a
password, key, token or internal address are never loaded. -->
"""

AGENTS = """# AGENTS

<!-- How the agent operates: procedures, rules, checklists. Loaded at the start of
every session. For example:
- Write decisions to the daily log; never write credentials anywhere.
- Ask before deleting anything.
Edits take effect at the next session start or on /reload. -->
"""

#: File name -> template text.
TEMPLATES: dict[str, str] = {"SOUL.md": SOUL, "USER.md": USER, "AGENTS.md": AGENTS}
#: The identity files, in the order a session loads them.
IDENTITY_FILES: tuple[str, ...] = ("SOUL.md", "USER.md", "AGENTS.md")
