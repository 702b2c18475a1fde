"""Human edits over machine renders: what makes an edit stick.

A :class:`HumanLayer` is the fold of one file's ``workspace`` edit events, in
entry-id order. :func:`apply` lays it over a freshly rendered document:

* an item the human removed (or rewrote) is never rendered again in that file;
* an item the human rewrote appears in its place, with the human's words;
* an item the human added stays, under the heading the human put it (that heading
  is created if the render has none);
* ``marks`` (item hash -> text) put a note for the human under an item, e.g. a
  clash: a later synthesis would change an item the human wrote.

Sans-IO and deterministic: the same render, layer and marks give the same document.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from solace.workspace.markdown import Hasher
from solace.workspace.model import Doc, Edit, Item, Section

__all__ = ["HumanItem", "HumanLayer", "apply"]

_DATED = re.compile(r"\d{4}-\d{2}-\d{2}")


@dataclass(frozen=True, slots=True)
class HumanItem:
    """An item a human wrote: where, what, when (the edit event's time), and the
    hash of the machine item it replaced ('' for an addition)."""

    section: str
    text: str
    ts: float
    replaces: str = ""


@dataclass(slots=True)
class HumanLayer:
    """One file's human edits, folded.

    Attributes:
        removed: hashes of items never to render again.
        items: the human's items by their own hash, in the order written.
    """

    removed: set[str] = field(default_factory=set)
    items: dict[str, HumanItem] = field(default_factory=dict)

    def fold(self, edit: Edit, ts: float, hasher: Hasher) -> None:
        """Fold in one edit (idempotent for the latest edit; replay in entry order)."""
        for h in edit.removed:
            self.removed.add(h)
            self.items.pop(h, None)
        for old, section, text in edit.changed:
            self.removed.add(old)
            previous = self.items.pop(old, None)
            replaces = previous.replaces if previous is not None else old
            h = hasher.item(text)
            self.removed.discard(h)
            self.items[h] = HumanItem(section, text, ts, replaces)
        for section, text in edit.added:
            h = hasher.item(text)
            self.removed.discard(h)
            self.items[h] = HumanItem(section, text, ts)


def apply(doc: Doc, layer: HumanLayer | None, hasher: Hasher,
          marks: Mapping[str, str] | None = None) -> Doc:
    """``doc`` (a machine render) with ``layer`` laid over it and ``marks`` attached.

    Guarantees: no item whose hash is in ``layer.removed`` appears; every item of
    ``layer.items`` appears exactly once; sections keep the render's order, a dated
    heading (``YYYY-MM-DD ...``) the human created is placed in date order, any other
    new heading goes last; empty sections are dropped.
    """
    layer = layer or HumanLayer()
    marks = marks or {}
    by_old = {hi.replaces: h for h, hi in layer.items.items() if hi.replaces}
    placed: set[str] = set()
    sections: list[tuple[str, list[Item]]] = []
    for s in doc.sections:
        items: list[Item] = []
        for item in s.items:
            h = hasher.item(item.text)
            human = by_old.get(h)
            if human is not None and human not in placed:
                placed.add(human)
                items.append(Item(layer.items[human].text, marks.get(human, "")))
            elif h in layer.items and h not in placed:
                placed.add(h)
                items.append(Item(layer.items[h].text, marks.get(h, item.mark)))
            elif h in layer.removed or h in layer.items:
                continue
            else:
                items.append(Item(item.text, marks.get(h, item.mark)))
        sections.append((s.header, items))
    index = {header: i for i, (header, _) in enumerate(sections)}
    for h, hi in layer.items.items():
        if h in placed:
            continue
        if hi.section not in index:
            index[hi.section] = len(sections)
            sections.append((hi.section, []))
        sections[index[hi.section]][1].append(Item(hi.text, marks.get(h, "")))
    order = sorted(range(len(sections)), key=lambda i: _place(sections[i][0], i))
    out = tuple(Section(sections[i][0], tuple(sections[i][1])) for i in order
                if sections[i][1])
    return Doc(doc.title, doc.preamble, out)


def _place(header: str, index: int) -> tuple[int, str, int]:
    if not header:  # items above every heading stay there
        return (-1, "", index)
    if _DATED.match(header):
        return (0, header[:16], index)
    return (1, "", index)
