"""Reading and writing the workspace's markdown, hashing items, diffing a human's edit.

Sans-IO: text in, text or values out. The grammar is deliberately small, so a file a
human edits in any editor reads back the same way:

* ``# title`` (first level-1 heading) and ``##``/``###`` headings (sections);
* HTML comments (``<!-- ... -->``, one or several lines) are never content: they
  carry templates' explanations and the marks for the human (clashes, conflicts);
* every other non-blank line is an item; a leading ``-``, ``*`` or ``+`` bullet
  marker is not part of its text. Comments before the first heading are the
  preamble; items before it belong to a section whose header is ``""``.

Items are named by a keyed hash of their normalised words (:class:`Hasher`): the
same bullet re-punctuated or re-cased is the same item, and the hash says nothing
about the text to anyone without the home's key.
"""

from __future__ import annotations

import difflib
import hashlib
import hmac
import re
from collections.abc import Iterable, Sequence

from solace.actors.mouth_filter import looks_like_credential
from solace.facts.classify import normalised
from solace.workspace.model import Doc, Edit, Item, Section

__all__ = [
    "WITHHELD",
    "Hasher",
    "diff",
    "parse",
    "plain_text",
    "render",
    "scrub",
]

#: What a heading that looked like a secret says instead.
WITHHELD = "(withheld)"
_BULLET = re.compile(r"^\s*[-*+]\s+(?:\[[ xX]\]\s+)?")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


class Hasher:
    """Keyed hashes of items and files (HMAC-SHA256, 16 hex digits for an item).

    Args:
        key: 32 bytes, derived from the home's key ring (``ring.derive("workspace")``).
    """

    def __init__(self, key: bytes) -> None:
        if len(key) < 16:
            raise ValueError(f"a workspace hash key needs >= 16 bytes, got {len(key)}")
        self._key = key

    def item(self, text: str) -> str:
        """The hash naming ``text`` as an item: equal for texts with the same words."""
        return hmac.new(self._key, normalised(text).encode(), hashlib.sha256).hexdigest()[:16]

    def file(self, text: str) -> str:
        """The hash of a whole file's content, byte for byte."""
        return hmac.new(self._key, b"file\x00" + text.encode(), hashlib.sha256).hexdigest()


def parse(text: str) -> Doc:
    """The document ``text`` holds (see the module's grammar). Never fails."""
    title = ""
    preamble: list[str] = []
    sections: list[tuple[str, list[Item]]] = []
    in_comment = False
    for raw in text.splitlines():
        line = raw.rstrip()
        if in_comment or line.lstrip().startswith("<!--"):
            in_comment = "-->" not in line
            if not sections and line.strip():
                preamble.append(line)
            continue
        if not line.strip():
            continue
        heading = _HEADING.match(line)
        if heading:
            level, words = len(heading.group(1)), heading.group(2)
            if level == 1 and not title and not sections:
                title = words
            else:
                sections.append((words, []))
            continue
        body = _BULLET.sub("", line).strip()
        if not body:
            continue
        if not sections:  # content before the first heading: a section without one
            sections.append(("", []))
        sections[-1][1].append(Item(body))
    return Doc(title, tuple(preamble), tuple(Section(h, tuple(i)) for h, i in sections))


def _comment(text: str) -> str:
    return "<!-- " + text.replace("--", "—") + " -->"


def render(doc: Doc) -> str:
    """The markdown of ``doc``: title, preamble, then each non-empty section with its
    bullets (a marked item is followed by its mark as a comment). Ends in one newline."""
    out: list[str] = []
    if doc.title:
        out += [f"# {doc.title}", ""]
    if doc.preamble:
        out += [*doc.preamble, ""]
    for section in doc.sections:
        if not section.items:
            continue
        if section.header:
            out.append(f"## {section.header}")
        for item in section.items:
            out.append(f"- {item.text}")
            if item.mark:
                out.append(f"  {_comment(item.mark)}")
        out.append("")
    while out and not out[-1]:
        out.pop()
    return "\n".join(out) + "\n"


def plain_text(text: str) -> str:
    """``text`` without HTML comments or lines that look like a secret: what a session
    loads of a file (a human may have typed anything into USER.md)."""
    kept: list[str] = []
    in_comment = False
    for line in text.splitlines():
        if in_comment or line.lstrip().startswith("<!--"):
            in_comment = "-->" not in line
            continue
        if looks_like_credential(line):
            continue
        kept.append(line.rstrip())
    out = "\n".join(kept).strip()
    return re.sub(r"\n{3,}", "\n\n", out)


def scrub(doc: Doc) -> tuple[Doc, int]:
    """``doc`` with every item that looks like a secret dropped and every heading that
    does replaced by :data:`WITHHELD`; the detector is Mouth's
    (:func:`~solace.actors.mouth_filter.looks_like_credential`).

    Returns:
        The clean document and how many items or headings were withheld.
    """
    withheld = 0
    sections = []
    for s in doc.sections:
        header = s.header
        if looks_like_credential(header):
            header, withheld = WITHHELD, withheld + 1
        items = []
        for item in s.items:
            if looks_like_credential(item.text):
                withheld += 1
                continue
            mark = item.mark if not looks_like_credential(item.mark) else ""
            items.append(Item(item.text, mark))
        sections.append(Section(header, tuple(items)))
    title = doc.title if not looks_like_credential(doc.title) else WITHHELD
    preamble = tuple(p for p in doc.preamble if not looks_like_credential(p))
    withheld += (title != doc.title) + len(doc.preamble) - len(preamble)
    return Doc(title, preamble, tuple(sections)), withheld


def diff(file: str, before: Sequence[tuple[str, str]], after: Doc, hasher: Hasher) -> Edit:
    """What changed from ``before`` (the (section hash, item hash) pairs of the version
    the workspace wrote) to ``after`` (the file as it is now).

    Items are matched in order (difflib on the pairs): an item kept under the same
    heading is unchanged; in a replaced run, old and new items under the same heading
    are paired in order as *changed* (old hash, new text), the rest are *added* or
    *removed* (an item moved under another heading is added there; its old place is
    not a removal). Added or changed lines that look like a
    secret are not recorded (counted in ``withheld``).
    """
    now = [(h, t) for h, t in after.items()]
    keys = [(hasher.item(h), hasher.item(t)) for h, t in now]
    old = [tuple(p) for p in before]
    added: list[tuple[str, str]] = []
    removed: list[str] = []
    changed: list[tuple[str, str, str]] = []
    withheld = 0
    matcher = difflib.SequenceMatcher(a=old, b=keys, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        pairs: dict[int, int] = {}  # old index -> new index: rewritten in place
        if op == "replace":  # pair in order, only under the same heading
            j = j1
            for i in range(i1, i2):
                k = next((n for n in range(j, j2) if keys[n][0] == old[i][0]), None)
                if k is not None:
                    pairs[i], j = k, k + 1
        for i in range(i1, i2):
            if i not in pairs:
                removed.append(old[i][1])
                continue
            head, text = now[pairs[i]]
            if looks_like_credential(text) or looks_like_credential(head):
                removed.append(old[i][1])
                withheld += 1
            elif old[i][1] != keys[pairs[i]][1]:
                changed.append((old[i][1], head, text))
        taken = set(pairs.values())
        for n in range(j1, j2):
            if n in taken:
                continue
            head, text = now[n]
            if looks_like_credential(text) or looks_like_credential(head):
                withheld += 1
            else:
                added.append((head, text))
    still = {k[1] for k in keys}  # an item moved elsewhere in the file is not removed
    removed = [h for h in dict.fromkeys(removed) if h not in still]
    return Edit(file, tuple(added), tuple(removed), tuple(changed), withheld)


def item_pairs(doc: Doc, hasher: Hasher) -> list[tuple[str, str]]:
    """The (section hash, item hash) pairs of ``doc``: what the state keeps of a write."""
    return [(hasher.item(h), hasher.item(t)) for h, t in doc.items()]


def unique(values: Iterable[str]) -> list[str]:
    """``values`` without repeats, first occurrence kept."""
    return list(dict.fromkeys(values))
