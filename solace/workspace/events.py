"""The workspace's one substrate kind, ``workspace``: a human's edit of a file, or the
digest of an imported day.

Sans-IO. ``op="edit"`` with ``file`` (relative to the workspace) and the counts in
the attributes; the content is JSON ``{"added": [[section, text]...], "removed":
[hash...], "changed": [[old hash, section, text]...]}``. Removed and replaced items
are named by keyed hash only (see :class:`~solace.workspace.model.Edit`).

``op="digest"`` (written by the workspace, never by ``observe``) is an imported day's
deterministic extractive summary: ``day`` (ISO date), ``at`` (the day's last imported
event's time, epoch seconds), ``coverage`` (a digest of the import keys it covers) and
``lines`` in the attributes; the content is JSON ``{"points": [text...]}``. A later
digest of the same day supersedes an earlier one (see :mod:`solace.workspace.digest`).

The kind must be among the substrate's ``extra_kinds`` (``solace.runtime.extra_kinds``
includes :data:`WORKSPACE_KINDS` once the runtime is wired; until then, open the
substrate with it explicitly).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from solace.conversation.events import Draft
from solace.workspace.model import Edit

__all__ = ["DIGEST_AGENT", "WORKSPACE_AGENT", "WORKSPACE_KIND", "WORKSPACE_KINDS", "Digest",
           "digest_draft", "digest_of", "edit_draft", "edit_of"]

WORKSPACE_KIND = "workspace"
#: Kinds this package adds to the substrate (for ``open_substrate(extra_kinds=...)``).
WORKSPACE_KINDS: tuple[str, ...] = (WORKSPACE_KIND,)
#: The author of edit events: the human, through the workspace's files.
WORKSPACE_AGENT = "user"
#: The author of digest events: the workspace itself.
DIGEST_AGENT = "workspace"


@dataclass(frozen=True, slots=True)
class Digest:
    """An imported day's summary: its date, when (the day's last imported event), which
    import keys it covers (a digest of them), how many lines, and its bullet points."""

    day: date
    at: float
    coverage: str
    lines: int
    points: tuple[str, ...]


def edit_draft(edit: Edit) -> Draft:
    """The event recording ``edit`` (a curation by the human)."""
    body = {"added": [list(a) for a in edit.added], "removed": list(edit.removed),
            "changed": [list(c) for c in edit.changed]}
    return Draft(WORKSPACE_AGENT, WORKSPACE_KIND, json.dumps(body, ensure_ascii=False), {
        "op": "edit", "file": edit.file, "added": str(len(edit.added)),
        "removed": str(len(edit.removed)), "changed": str(len(edit.changed)),
        "withheld": str(edit.withheld),
    })


def edit_of(kind: str, content: str, attrs: Mapping[str, Any]) -> Edit | None:
    """The edit an event records, or None if it is not a well-formed workspace edit."""
    if kind != WORKSPACE_KIND or attrs.get("op") != "edit":
        return None
    try:
        body = json.loads(content)
        return Edit(
            str(attrs.get("file", "")),
            tuple((str(s), str(t)) for s, t in body.get("added", [])),
            tuple(str(h) for h in body.get("removed", [])),
            tuple((str(o), str(s), str(t)) for o, s, t in body.get("changed", [])),
            int(attrs.get("withheld", "0") or 0),
        )
    except (ValueError, TypeError, AttributeError):
        return None


def digest_draft(digest: Digest) -> Draft:
    """The event recording ``digest`` (written by the workspace)."""
    return Draft(DIGEST_AGENT, WORKSPACE_KIND,
                 json.dumps({"points": list(digest.points)}, ensure_ascii=False), {
                     "op": "digest", "day": digest.day.isoformat(), "at": repr(digest.at),
                     "coverage": digest.coverage, "lines": str(digest.lines),
                 })


def digest_of(kind: str, content: str, attrs: Mapping[str, Any]) -> Digest | None:
    """The digest an event records, or None if it is not a well-formed workspace digest."""
    if kind != WORKSPACE_KIND or attrs.get("op") != "digest":
        return None
    try:
        points: Sequence[Any] = json.loads(content).get("points", [])
        return Digest(date.fromisoformat(str(attrs.get("day", ""))), float(attrs.get("at", "")),
                      str(attrs.get("coverage", "")), int(attrs.get("lines", "0") or 0),
                      tuple(str(p) for p in points))
    except (ValueError, TypeError, AttributeError):
        return None
