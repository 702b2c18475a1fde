"""The workspace's tree on disk: where each file lives, reading it, loading a session.

Blocking helpers (call through the offloader). Layout under the workspace root::

    SOUL.md  USER.md  AGENTS.md      identity (the human's; created from templates)
    memory/YYYY-MM-DD.md             daily logs
    memory/weekly/YYYY-Www.md        weekly roll-ups
    memory/monthly/YYYY-MM.md        monthly roll-ups
    MEMORY.md                        curated long-term memory (main sessions only)
    NOW.md                           the current state, overwritten each cycle
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import date, timedelta
from pathlib import Path

from solace.actors.mouth_filter import looks_like_credential
from solace.sealed import write_private
from solace.workspace.markdown import parse, plain_text, render
from solace.workspace.model import Doc, Section, SessionContext
from solace.workspace.templates import IDENTITY_FILES

__all__ = [
    "MEMORY",
    "NOW",
    "daily",
    "daily_docs",
    "export",
    "monthly",
    "read",
    "session_context",
    "tracked",
    "weekly",
    "weekly_docs",
]

MEMORY = "MEMORY.md"
NOW = "NOW.md"
_DAY_FILE = re.compile(r"(\d{4}-\d{2}-\d{2})\.md\Z")
_WEEK_FILE = re.compile(r"(\d{4}-W\d{2})\.md\Z")


def daily(day: date) -> str:
    return f"memory/{day.isoformat()}.md"


def weekly(key: str) -> str:
    return f"memory/weekly/{key}.md"


def monthly(month: str) -> str:
    return f"memory/monthly/{month}.md"


def read(path: Path) -> str | None:
    """The text of ``path``, or None if there is no such file."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def tracked(root: Path, known: Sequence[str]) -> list[str]:
    """Every file whose human edits are recorded: identity files, daily logs, roll-ups,
    MEMORY.md (NOW.md is volatile), plus ``known`` ones still present. Sorted."""
    found = set(IDENTITY_FILES) | {MEMORY} | set(known)
    memory = root / "memory"
    if memory.is_dir():
        found |= {f"memory/{p.name}" for p in memory.glob("*.md") if _DAY_FILE.match(p.name)}
        found |= {f"memory/weekly/{p.name}" for p in memory.glob("weekly/*.md")}
        found |= {f"memory/monthly/{p.name}" for p in memory.glob("monthly/*.md")}
    return sorted(rel for rel in found if (root / rel).is_file())


def daily_docs(root: Path) -> list[tuple[date, Doc]]:
    """Every daily log as it is on disk (human edits included), date order."""
    out = []
    for p in sorted((root / "memory").glob("*.md")):
        m = _DAY_FILE.match(p.name)
        if m:
            try:
                day = date.fromisoformat(m.group(1))
            except ValueError:
                continue
            out.append((day, parse(p.read_text(encoding="utf-8"))))
    return out


def weekly_docs(root: Path) -> list[tuple[str, Doc]]:
    """Every weekly roll-up on disk, week order."""
    return [(m.group(1), parse(p.read_text(encoding="utf-8")))
            for p in sorted((root / "memory" / "weekly").glob("*.md"))
            if (m := _WEEK_FILE.match(p.name))]


def _fit(doc: Doc, budget: int, count: Callable[[str], int], newest_first: bool) -> str:
    """``doc`` rendered within ``budget`` tokens: whole sections dropped from the oldest
    (``newest_first``) or from the end, then items from the end of the last one kept."""
    sections = list(doc.sections)
    text = plain_text(render(Doc(doc.title, (), tuple(sections))))
    while sections and count(text) > budget:
        if newest_first and len(sections) > 1:
            sections.pop(0)
        elif len(sections[-1].items) > 1:
            last = sections[-1]
            sections[-1] = Section(last.header, last.items[:-1])
        else:
            sections.pop()
        text = plain_text(render(Doc(doc.title, (), tuple(sections))))
    return text if sections else ""


def session_context(root: Path, today: date, main: bool, daily_budget: int,
                    memory_budget: int, count: Callable[[str], int]) -> SessionContext:
    """What a session loads (see :class:`SessionContext`). Identity files are loaded
    whole (comments and secret-looking lines left out); MEMORY.md within
    ``memory_budget`` (its last items dropped first), only if ``main``; yesterday's and
    today's logs within ``daily_budget`` together (the oldest sections dropped first)."""
    files: list[str] = []
    stable: list[str] = []
    for name in IDENTITY_FILES:
        text = read(root / name)
        if text is not None and plain_text(text):
            stable.append(plain_text(text))
            files.append(name)
    if main:
        text = read(root / MEMORY)
        if text is not None:
            fitted = _fit(parse(text), memory_budget, count, newest_first=False)
            if fitted:
                stable.append(fitted)
                files.append(MEMORY)
    days = [(d, read(root / daily(d))) for d in (today - timedelta(days=1), today)]
    present = [(d, parse(t)) for d, t in days if t is not None]
    semi: list[tuple[date, str]] = []
    budget = daily_budget
    for d, doc in reversed(present):  # today first: it is what the budget keeps
        fitted = _fit(doc, budget, count, newest_first=True) if budget > 0 else ""
        if fitted:
            semi.insert(0, (d, fitted))
            budget -= count(fitted)
    files += [daily(d) for d, _ in semi]
    stable_text = "\n\n".join(stable)
    semi_text = "\n\n".join(t for _, t in semi)
    return SessionContext(stable_text, semi_text, count(stable_text) + count(semi_text),
                          tuple(files))


def export(root: Path, directory: Path) -> list[Path]:
    """Copy every markdown file under ``root`` to ``directory`` (same relative paths),
    leaving out lines that look like a secret. Returns the files written."""
    written = []
    for p in sorted(root.rglob("*.md")):
        lines = [line for line in p.read_text(encoding="utf-8").splitlines()
                 if not looks_like_credential(line)]
        target = directory / p.relative_to(root)
        write_private(target, ("\n".join(lines) + "\n").encode(), what=f"export of {p.name}")
        written.append(target)
    return written
