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
    "NoWorkspaceFileError",
    "WorkspacePathError",
    "daily",
    "daily_docs",
    "export",
    "exported",
    "listing",
    "monthly",
    "read",
    "read_file",
    "session_context",
    "tracked",
    "weekly",
    "weekly_docs",
    "write_export",
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


class WorkspacePathError(ValueError):
    """A file name that is not a file of the workspace (named in the message)."""


class NoWorkspaceFileError(WorkspacePathError, LookupError):
    """A file name inside the workspace that names no file."""


def listing(root: Path) -> list[tuple[str, int]]:
    """Every file under ``root``: (path relative to it, bytes), sorted by path."""
    files = sorted(p for p in root.rglob("*") if p.is_file())
    return [(str(p.relative_to(root)), p.stat().st_size) for p in files]


def read_file(root: Path, name: str) -> str:
    """The text of workspace file ``name`` (relative to ``root``; ``.md`` may be left off).

    Raises:
        WorkspacePathError: ``name`` leaves the workspace.
        NoWorkspaceFileError: it names no file (the message lists the top level's).
    """
    base = root.resolve()
    for candidate in (name, f"{name}.md"):
        try:
            path = (base / candidate).resolve()
            inside = path.is_relative_to(base)
            if inside and path.is_file():
                return path.read_text(encoding="utf-8", errors="replace")
        except (OSError, ValueError) as exc:  # a name too long, a NUL byte
            raise WorkspacePathError(f"{name!r} is not a workspace file name ({exc})") from None
        if not inside:
            raise WorkspacePathError(f"{name!r} is outside the workspace {root}")
    known = ", ".join(sorted(str(p.relative_to(base)) for p in base.glob("*.md")))
    raise NoWorkspaceFileError(f"no workspace file {name!r} in {root} (top level: {known})")


def exported(root: Path) -> list[tuple[str, str]]:
    """Every markdown file under ``root`` as (relative path, text), leaving out lines
    that look like a secret: what an export writes."""
    out = []
    for p in sorted(root.rglob("*.md")):
        lines = [line for line in p.read_text(encoding="utf-8").splitlines()
                 if not looks_like_credential(line)]
        out.append((str(p.relative_to(root)), "\n".join(lines) + "\n"))
    return out


def write_export(files: Sequence[tuple[str, str]], directory: Path) -> list[Path]:
    """Write :func:`exported` files under ``directory`` (same relative paths, 0600);
    returns the files written.

    Raises:
        WorkspacePathError: a path that would leave ``directory``; nothing after it is
            written.
    """
    base, written = directory.resolve(), []
    for rel, text in files:
        target = (base / rel).resolve()
        if not target.is_relative_to(base):
            raise WorkspacePathError(f"export path {rel!r} leaves {directory}")
        write_private(target, text.encode(), what=f"export of {rel}")
        written.append(target)
    return written


def export(root: Path, directory: Path) -> list[Path]:
    """Copy every markdown file under ``root`` to ``directory`` (same relative paths),
    leaving out lines that look like a secret. Returns the files written."""
    return write_export(exported(root), directory)
