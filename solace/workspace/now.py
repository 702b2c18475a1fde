"""NOW.md: the current state, overwritten each cycle, a few hundred tokens at most.

Pure: the state and a token counter in, the text out. Sections in priority order
(the day and time, the active topic, open tasks, open notes, the last decisions);
when the text is over budget, items are dropped from the least important section
first (oldest decisions, then notes, then tasks), and a single over-long item is
cut to its first words. Lines that look like a secret are never written.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import datetime, tzinfo

from solace.actors.mouth_filter import looks_like_credential
from solace.workspace.daily import Ledger
from solace.workspace.model import NowState

__all__ = ["fill_now", "is_task", "render_now"]

_TASK = re.compile(r"^\s*(?:\[\s?\]|todo\b|task\b|to do\b)[:\s-]*", re.IGNORECASE)
_ITEM_WORDS = 40


def is_task(line: str) -> bool:
    """A note line that is an open task (``[ ] ...``, ``TODO ...``, ``task: ...``)."""
    return _TASK.match(line) is not None


def fill_now(state: NowState, ledger: Ledger) -> NowState:
    """``state`` with its empty fields filled from ``ledger``: the active topic's title,
    the open notes (task-shaped ones as tasks) and the last five decisions."""
    notes = ledger.open_notes()
    topic = ledger.titles.get(ledger.active_topic, "") if ledger.active_topic else ""
    return NowState(
        state.active_topic or topic,
        state.open_notes or tuple(n for n in notes if not is_task(n)),
        state.tasks or tuple(n for n in notes if is_task(n)),
        state.decisions or tuple(t for _, t in ledger.decisions[-5:]))


def _clean(items: Sequence[str]) -> list[str]:
    out = []
    for item in items:
        words = " ".join(item.split()).split(" ")
        text = " ".join(words[:_ITEM_WORDS]) + (" ..." if len(words) > _ITEM_WORDS else "")
        if text.strip() and not looks_like_credential(text):
            out.append(text)
    return out


def render_now(now: float, tz: tzinfo, state: NowState, budget: int,
               count: Callable[[str], int]) -> str:
    """NOW.md for ``state`` at ``now``, at most ``budget`` tokens by ``count``.

    Guarantees: ``count(result) <= budget`` whenever the heading and the time line
    fit (they always do for budgets of 40 tokens or more).
    """
    when = datetime.fromtimestamp(now, tz)
    head = ["# NOW", "", f"Updated {when.strftime('%Y-%m-%d %H:%M')} ({when.strftime('%A')}, "
            f"{when.tzname()})"]
    topic = _clean([state.active_topic])
    tasks = _clean(state.tasks)
    notes = _clean(state.open_notes)
    decisions = _clean(state.decisions)[-10:]
    parts: list[tuple[str, list[str]]] = [("Active topic", topic), ("Tasks", tasks),
                                          ("Open notes", notes), ("Last decisions", decisions)]

    def text() -> str:
        out = list(head)
        for title, items in parts:
            if items:
                out += ["", f"## {title}", *(f"- {i}" for i in items)]
        return "\n".join(out) + "\n"

    drop_order = [3, 2, 1, 0]  # decisions first, the active topic last
    result = text()
    while count(result) > budget:
        victim = next((i for i in drop_order if parts[i][1]), None)
        if victim is None:
            break
        items = parts[victim][1]
        items.pop(0 if victim == 3 else len(items) - 1)  # oldest decision, newest note
        result = text()
    return result
