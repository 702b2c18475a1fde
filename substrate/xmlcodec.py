"""The XML record of one event: a fast writer and an lxml reader (sans-IO).

Schema (one element, UTF-8, no XML declaration, always on one line)::

    <event id="42" ts="1700000000.25" agent="Supervisor" kind="message">
      <content>text, with &amp; &lt; &gt; &#13; (CR) and &#10; (LF) escaped</content>
      <attrs><attr name="dia_id">D1:3</attr><attr name="any key at all">value</attr></attrs>
    </event>

(shown indented here; the bytes hold no whitespace between elements.)

* ``id`` is the entry id (decimal), ``ts`` is ``repr(float)`` so it round-trips exactly.
* ``agent`` is any non-empty text; ``kind`` matches ``[a-z][a-z0-9_]*``.
* ``<attrs>`` is always present (``<attrs/>`` when empty); each ``<attr>`` carries its
  key in a ``name`` attribute, so keys may hold any character XML can carry.
* Attribute values escape ``& < > "`` and TAB, LF, CR as character references, so XML's
  attribute-value normalisation cannot turn them into spaces. Element text escapes
  ``& < >`` and CR, LF (so CR and CRLF survive XML's end-of-line handling, and a record
  is one line).

Text XML 1.0 cannot carry at all (C0 controls other than TAB/LF/CR, lone surrogates,
U+FFFE, U+FFFF) is refused with :class:`InvalidEventError` naming the field and code
point; nothing is ever dropped or replaced.

The writer escapes with ``str.replace``, builds the record as one f-string and checks it
with one encode and one scan for C0 bytes (an lxml tree per event costs ~12 µs);
:func:`decode_event` parses with lxml, which checks well-formedness on every read.
"""

from __future__ import annotations

import operator
import re
import threading
from collections.abc import Mapping, Sequence
from types import MappingProxyType

from lxml import etree

from .errors import CorruptFrameError, InvalidEventError
from .event import Event

__all__ = ["decode_event", "decode_events", "encode_event", "find_illegal_char"]

# Bytes that never occur in the UTF-8 of legal XML text (C0 minus TAB, LF, CR). They
# never occur inside multi-byte UTF-8 sequences either, so one scan of the whole record
# finds them.
_C0_BYTES = bytes(c for c in range(32) if c not in (9, 10, 13))
_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def find_illegal_char(text: str) -> tuple[int, int] | None:
    """Return ``(index, code point)`` of the first char XML 1.0 cannot carry, else None."""
    m = _ILLEGAL.search(text)
    return None if m is None else (m.start(), ord(m.group()))


def _text(s: str) -> str:
    if "&" in s:
        s = s.replace("&", "&amp;")
    if "<" in s:
        s = s.replace("<", "&lt;")
    if ">" in s:
        s = s.replace(">", "&gt;")
    if "\r" in s:
        s = s.replace("\r", "&#13;")
    if "\n" in s:
        s = s.replace("\n", "&#10;")
    return s


def _attr(s: str) -> str:
    s = _text(s)
    if '"' in s:
        s = s.replace('"', "&quot;")
    if "\t" in s:
        s = s.replace("\t", "&#9;")
    return s


_ESCAPED: dict[str, str] = {}  # agent and kind names are few: check and escape each once
_EMPTY_TAIL = "</content><attrs/></event>"


def _escaped_name(field: str, name: str) -> str:
    if not isinstance(name, str):
        raise TypeError(f"{field} must be str, got {type(name).__name__}: {name!r}")
    if not name:
        raise InvalidEventError(f"{field} must be a non-empty string")
    found = find_illegal_char(name)
    if found is not None:
        raise InvalidEventError(
            f"{field} holds U+{found[1]:04X} at index {found[0]}, which XML 1.0 cannot carry "
            "(C0 controls other than TAB/LF/CR, lone surrogates, U+FFFE/U+FFFF)"
        )
    escaped = _attr(name)
    if len(name) <= 256:  # names are few and short: cache them, checked and escaped
        if len(_ESCAPED) >= 4096:
            _ESCAPED.clear()
        _ESCAPED[name] = escaped
    return escaped


_ESCAPED_KEYS: dict[str, str] = {}


def _escaped_key(key: str) -> str:
    escaped = _attr(key)
    if len(key) <= 64 and find_illegal_char(key) is None:
        if len(_ESCAPED_KEYS) >= 4096:
            _ESCAPED_KEYS.clear()
        _ESCAPED_KEYS[key] = escaped
    return escaped


def _refuse(agent: str, kind: str, content: str, attrs: Mapping[str, str] | None) -> None:
    fields: list[tuple[str, str]] = [("agent", agent), ("kind", kind), ("content", content)]
    for k, v in (attrs or {}).items():
        fields.append((f"attrs key {k!r}", k))
        fields.append((f"attrs[{k!r}]", v))
    for name, value in fields:
        found = find_illegal_char(value)
        if found is not None:
            index, cp = found
            raise InvalidEventError(
                f"{name} holds U+{cp:04X} at index {index}, which XML 1.0 cannot carry "
                "(C0 controls other than TAB/LF/CR, lone surrogates, U+FFFE/U+FFFF); "
                "remove it or encode the text (e.g. base64) before appending"
            )
    raise AssertionError("an illegal character was detected but not located")  # pragma: no cover


def encode_event(
    entry_id: int,
    ts: float,
    agent: str,
    kind: str,
    content: str,
    attrs: Mapping[str, str] | None = None,
) -> bytes:
    """Serialise one event to its XML record (UTF-8 bytes, one line).

    Args:
        entry_id: The event's id (> 0).
        ts: Unix seconds; must be finite.
        agent: Non-empty text.
        kind: A kind name (not checked against a kind set here).
        content: Any text XML 1.0 can carry.
        attrs: str → str metadata, or None.

    Returns:
        Bytes that :func:`decode_event` turns back into exactly these fields.

    Raises:
        InvalidEventError: a field holds a char XML cannot carry (the message names the
            field and the code point), ``ts`` is not finite, or ``agent`` is empty.
        TypeError: a field has the wrong type.
    """
    if type(content) is not str:
        if not isinstance(content, str):
            raise TypeError(f"content must be str, got {type(content).__name__}")
        content = str.__str__(content)  # its characters, whatever its __str__ says
    a = _ESCAPED.get(agent) if type(agent) is str else None
    if a is None:
        a = _escaped_name("agent", agent)
    k = _ESCAPED.get(kind) if type(kind) is str else None
    if k is None:
        k = _escaped_name("kind", kind)
    if type(entry_id) is not int:
        entry_id = operator.index(entry_id)  # as "{:d}" would take it (True is 1)
    if type(ts) is not float:
        ts = float(ts)
    if ts - ts != 0.0:  # inf or nan
        raise InvalidEventError(f"ts must be a finite number of unix seconds, got {ts!r}")
    body = _text(content)
    if attrs:
        parts = []
        for key, value in attrs.items():
            if type(key) is not str or type(value) is not str:
                if not isinstance(key, str) or not isinstance(value, str):
                    raise TypeError(f"attrs must map str to str, got {key!r}: {value!r}")
                key, value = str.__str__(key), str.__str__(value)
            ek = _ESCAPED_KEYS.get(key)
            if ek is None:
                ek = _escaped_key(key)
            parts.append(f'<attr name="{ek}">{_text(value)}</attr>')
        tail = f"</content><attrs>{''.join(parts)}</attrs></event>"
    else:
        tail = _EMPTY_TAIL
    record = f'<event id="{entry_id}" ts="{ts!r}" agent="{a}" kind="{k}"><content>{body}{tail}'
    # Names were checked when cached and id and ts are digits, so the text fields are
    # checked on the whole record (one pass each), cheapest test first.
    if "\ufffe" in record or "\uffff" in record:
        _refuse(agent, kind, content, attrs)
    try:
        data = record.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogate
        _refuse(agent, kind, content, attrs)
        raise  # pragma: no cover
    if len(data.translate(None, _C0_BYTES)) != len(data):
        _refuse(agent, kind, content, attrs)
    return data


_local = threading.local()  # lxml parsers must not be shared between threads


def _parser() -> etree.XMLParser:
    parser = getattr(_local, "parser", None)
    if parser is None:
        parser = etree.XMLParser(
            resolve_entities=False, no_network=True, huge_tree=True, load_dtd=False
        )
        _local.parser = parser
    return parser


def _bad(why: str) -> CorruptFrameError:
    return CorruptFrameError(f"event XML does not match the schema: {why}")


def _element_event(root: etree._Element) -> Event:
    if root.tag != "event" or len(root) != 2:
        raise _bad(f"root is <{root.tag}> with {len(root)} children")
    content_el, attrs_el = root[0], root[1]
    if content_el.tag != "content" or attrs_el.tag != "attrs" or len(content_el):
        raise _bad("expected <content> then <attrs>")
    get = root.get
    entry_id, ts, agent, kind = get("id"), get("ts"), get("agent"), get("kind")
    if entry_id is None or ts is None or agent is None or kind is None:
        raise _bad("an <event> attribute is missing")
    attrs: dict[str, str] = {}
    for el in attrs_el:
        name = el.get("name")
        if el.tag != "attr" or name is None or name in attrs or len(el):
            raise _bad(f"bad <attr> element {el.tag!r} name={name!r}")
        attrs[name] = el.text or ""
    try:
        return Event(int(entry_id), float(ts), agent, kind, content_el.text or "",
                     MappingProxyType(attrs))
    except ValueError as exc:
        raise _bad(f"bad id or ts: {exc}") from None


def decode_event(data: bytes) -> Event:
    """Parse one XML record (as written by :func:`encode_event`) with lxml.

    Raises:
        CorruptFrameError: the bytes are not well-formed XML or do not follow the schema.
    """
    try:
        root = etree.fromstring(data, _parser())
    except etree.XMLSyntaxError as exc:
        raise _bad(str(exc)) from None
    return _element_event(root)


def decode_events(records: Sequence[bytes]) -> list[Event]:
    """Parse many XML records with one lxml parse (~2x faster per record than one each).

    The records are parsed as children of one wrapper element; if that fails, or the
    count differs, each record is parsed alone so the error names the bad one.

    Raises:
        CorruptFrameError: a record is not well-formed or breaks the schema.
    """
    try:
        root = etree.fromstring(b"".join((b"<events>", *records, b"</events>")), _parser())
    except etree.XMLSyntaxError:
        root = None
    if root is None or len(root) != len(records):
        return [decode_event(r) for r in records]
    return [_element_event(el) for el in root]
