"""What the REPL prints for ``/recall`` and ``/inspect``: small tables a person reads.

Pure functions of plain values (hits with their events already looked up, stats
dicts), so they are tested without a runtime.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from solace.app.api import RecallHit

__all__ = [
    "INSPECT_COLUMNS",
    "Cited",
    "cite_hits",
    "format_hits",
    "format_inspect",
    "format_recall",
    "inspect_help",
]

_SPEAKER_PREFIX = ("user", "Main", "Mouth", "Mood", "Time", "Supervisor", "assistant", "Solace")


@dataclass(frozen=True, slots=True)
class Cited:
    """One recall hit as the REPL shows it.

    Attributes:
        date: ``YYYY-MM-DD HH:MM`` (UTC) of the newest event it stands for.
        speaker: who said it (``user``, ``Mouth`` ...), comma-joined if several.
        rung: 0 raw, 1 extractive, 2 abstractive, 3 embedding + tags.
        source: where it came from: tier, owner (read-through) and substrate entries.
        text: the text without its ``speaker:`` prefix, whitespace collapsed.
        score: the composite retrieval score.
    """

    date: str
    speaker: str
    rung: int
    source: str
    text: str
    score: float


def _strip_speaker(text: str) -> str:
    text = " ".join(text.split())
    head, sep, rest = text.partition(": ")
    if sep and head in _SPEAKER_PREFIX:
        return rest
    return text


def _key(text: str) -> str:
    return " ".join(_strip_speaker(text).casefold().split()).rstrip(".!?")


def _entries(ids: Sequence[int]) -> str:
    if not ids:
        return ""
    lo, hi = min(ids), max(ids)
    return f"#{lo}" if lo == hi else f"#{lo}-{hi}"


def cite_hits(hits: Sequence[RecallHit], *, exclude: Sequence[str] = (),
              k: int | None = None) -> list[Cited]:
    """The application API's recall hits (best first) as :class:`Cited` rows, each text
    shown once.

    Args:
        hits: :meth:`solace.app.Solace.recall`'s hits (they carry date and speakers).
        exclude: texts never shown (the line just typed, the query itself).
        k: at most this many rows.

    Guarantees: a text said twice (Main's draft and Mouth's speech of one reply, or
    the same line in two agents' memories) appears once, at its best rank; a hit
    whose text is one of ``exclude`` never appears.
    """
    skip = {_key(t) for t in exclude}
    seen: set[str] = set()
    rows: list[Cited] = []
    for hit in hits:
        key = _key(hit.text)
        if not key or key in skip or key in seen:
            continue
        seen.add(key)
        date = hit.date[:16].replace("T", " ") if hit.entry_ids else "?"
        tier = "long-term" if hit.tier == "longterm" else "working"
        owner = f" ({hit.owner}'s)" if hit.owner else ""
        source = f"{tier}{owner} {_entries(hit.entry_ids)}".strip()
        rows.append(Cited(date, ",".join(hit.speakers) or "?", hit.rung, source,
                          _strip_speaker(hit.text), float(hit.score)))
        if k is not None and len(rows) >= k:
            break
    return rows


def format_recall(rows: Sequence[Cited], *, width: int = 100) -> str:
    """Rows as a table: rank, date, speaker, rung, source, text (cut to ``width``)."""
    if not rows:
        return "(nothing recalled)"
    speaker_w = max(7, *(len(r.speaker) for r in rows))
    source_w = max(6, *(len(r.source) for r in rows))
    head = f" #  {'date':<16}  {'speaker':<{speaker_w}}  rung  {'source':<{source_w}}  text"
    lines = [head]
    for i, r in enumerate(rows, 1):
        text = r.text if len(r.text) <= width else r.text[: width - 1] + "…"
        lines.append(f"{i:2}  {r.date:<16}  {r.speaker:<{speaker_w}}  {r.rung:>4}  "
                     f"{r.source:<{source_w}}  {text}")
    return "\n".join(lines)


def format_hits(hits: Sequence[Any]) -> str:
    """Raw hits as lines: score, tier/rung, attribution, text (``solace recall``)."""
    if not hits:
        return "(nothing recalled)"
    lines = []
    for i, hit in enumerate(hits, 1):
        owner = f" from {hit.owner}" if hit.owner else ""
        text = " ".join(hit.text.split())
        lines.append(f"{i:2}. [{hit.score:.3f} {hit.tier} r{hit.rung}{owner}] {text}")
    return "\n".join(lines)


#: ``/inspect``'s columns: (header, stats key or how it is computed, explanation).
INSPECT_COLUMNS: tuple[tuple[str, str], ...] = (
    ("agent", "the actor (Supervisor, Main, Mood, Time, Mouth)"),
    ("budget", "its working tier's token budget (hyperfocus raises Supervisor's)"),
    ("used", "tokens its working records take now"),
    ("use%", "used / budget; the fade pushes records down the ladder above 100%"),
    ("work r0/r1/r2", "working records at rung 0 raw, 1 extractive, 2 abstractive"),
    ("lt r1/r2/r3", "long-term records at rung 1, 2 and 3 (embedding + tags)"),
    ("index", "the long-term FAISS index kind (flat, ivf, hnsw)"),
    ("handled", "messages its inbox has handled since start"),
)


def inspect_help() -> str:
    """What each ``/inspect`` column means (``/help inspect``)."""
    width = max(len(h) for h, _ in INSPECT_COLUMNS)
    lines = ["/inspect [AGENT]: one row per agent; with AGENT, also its counters.", ""]
    lines += [f"  {h:<{width}}  {text}" for h, text in INSPECT_COLUMNS]
    return "\n".join(lines)


def _by_rung(counts: object, rungs: Sequence[int]) -> str:
    if not isinstance(counts, Mapping):
        return "-"
    return "/".join(str(counts.get(r, counts.get(str(r), 0))) for r in rungs)


def _detail(key: str, value: object) -> str:
    if key == "fade_history" and isinstance(value, list):  # (time, tokens, budget) points
        return f"{len(value)} points of working tokens against budget"
    return str(value)


def format_inspect(stats: Mapping[str, Mapping[str, object]], *, details: bool = False) -> str:
    """Stats per agent as the table of :data:`INSPECT_COLUMNS`; with ``details``, every
    stat of each agent below it as ``key: value`` lines."""
    rows = []
    for agent, s in stats.items():
        budget = s.get("budget_tokens", 0)
        used = s.get("working_tokens", 0)
        share = (f"{100 * used / budget:.0f}%"
                 if isinstance(budget, int) and isinstance(used, int) and budget else "-")
        rows.append((agent, str(budget), str(used), share,
                     _by_rung(s.get("working_by_rung"), (0, 1, 2)),
                     _by_rung(s.get("longterm_by_rung"), (1, 2, 3)),
                     str(s.get("longterm_index", "-")), str(s.get("inbox_handled", "-"))))
    headers = [h for h, _ in INSPECT_COLUMNS]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) if i == 0 else h.rjust(w)
                       for i, (h, w) in enumerate(zip(headers, widths, strict=True))).rstrip()]
    for r in rows:
        lines.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                               for i, (c, w) in enumerate(zip(r, widths, strict=True))).rstrip())
    if details:
        for agent, s in stats.items():
            lines.append(f"{agent}:")
            lines += [f"  {key}: {_detail(key, value)}" for key, value in s.items()]
    lines.append("(/help inspect explains the columns)")
    return "\n".join(lines)
