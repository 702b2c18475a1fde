"""The XML record: the fast writer round-trips any XML-legal text through lxml exactly."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from substrate import CorruptFrameError, Event, InvalidEventError
from substrate.xmlcodec import decode_event, encode_event, find_illegal_char

ILLEGAL = [chr(c) for c in range(32) if c not in (9, 10, 13)] + ["\ufffe", "\uffff"]
xml_chars = st.characters(exclude_categories=("Cs",), exclude_characters=ILLEGAL)
xml_text = st.text(xml_chars, max_size=200)
attrs_st = st.dictionaries(xml_text, xml_text, max_size=5)
ts_st = st.floats(allow_nan=False, allow_infinity=False)


@settings(max_examples=300, deadline=None)
@given(
    entry_id=st.integers(1, 2**62),
    ts=ts_st,
    agent=xml_text.filter(bool),
    content=xml_text,
    attrs=attrs_st,
)
def test_any_xml_legal_text_and_attrs_round_trip_exactly(
    entry_id: int, ts: float, agent: str, content: str, attrs: dict[str, str]
) -> None:
    data = encode_event(entry_id, ts, agent, "message", content, attrs)
    assert b"\n" not in data and b"\r" not in data  # one line, CR never raw
    event = decode_event(data)
    assert event == Event(entry_id, ts, agent, "message", content, attrs)
    assert math.copysign(1, event.ts) == math.copysign(1, ts)  # -0.0 survives too


def _lxml_tree(
    entry_id: int, ts: float, agent: str, content: str, attrs: dict[str, str]
) -> etree._Element:
    root = etree.Element("event", id=str(entry_id), ts=repr(ts), agent=agent, kind="cue")
    etree.SubElement(root, "content").text = content
    attrs_el = etree.SubElement(root, "attrs")
    for k, v in attrs.items():
        etree.SubElement(attrs_el, "attr", name=k).text = v
    return root


@settings(max_examples=200, deadline=None)
@given(ts=ts_st, agent=xml_text.filter(bool), content=xml_text, attrs=attrs_st)
def test_fast_writer_output_parses_to_the_tree_lxml_would_build(
    ts: float, agent: str, content: str, attrs: dict[str, str]
) -> None:
    parsed = etree.fromstring(encode_event(7, ts, agent, "cue", content, attrs))
    built = _lxml_tree(7, ts, agent, content, attrs)
    assert etree.tostring(parsed, method="c14n") == etree.tostring(built, method="c14n")


def test_carriage_returns_and_crlf_survive_in_content_attrs_and_agent() -> None:
    text = "a\r\nb\rc\n\td  e "
    event = decode_event(encode_event(1, 0.0, text, "fact", text, {text: text}))
    assert (event.agent, event.content, dict(event.attrs)) == (text, text, {text: text})


@pytest.mark.parametrize("char", ILLEGAL + ["\ud800", "\udfff"])
@pytest.mark.parametrize("field", ["agent", "content", "attr key", "attr value"])
def test_xml_illegal_chars_are_refused_naming_field_and_code_point(char: str, field: str) -> None:
    text = f"ok{char}"
    agent = text if field == "agent" else "Main"
    content = text if field == "content" else "fine"
    attrs = {text: "v"} if field == "attr key" else {"k": text} if field == "attr value" else {}
    with pytest.raises(InvalidEventError, match=f"U\\+{ord(char):04X} at index 2") as info:
        encode_event(1, 1.0, agent, "message", content, attrs)
    expected = {"agent": "agent", "content": "content", "attr key": "attrs key",
                "attr value": "attrs["}[field]
    assert str(info.value).startswith(expected)


def test_find_illegal_char_reports_index_and_code_point() -> None:
    assert find_illegal_char("abc") is None
    assert find_illegal_char("ab\x00") == (2, 0)
    assert find_illegal_char("\ud83d") == (0, 0xD83D)


@pytest.mark.parametrize("ts", [math.nan, math.inf, -math.inf])
def test_non_finite_timestamps_are_refused(ts: float) -> None:
    with pytest.raises(InvalidEventError, match="finite"):
        encode_event(1, ts, "Main", "message", "x")


def test_empty_agent_and_wrong_types_are_refused() -> None:
    with pytest.raises(InvalidEventError, match="agent"):
        encode_event(1, 1.0, "", "message", "x")
    with pytest.raises(TypeError, match="content"):
        encode_event(1, 1.0, "Main", "message", b"x")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="attrs"):
        encode_event(1, 1.0, "Main", "message", "x", {"k": 1})  # type: ignore[dict-item]


@pytest.mark.parametrize(
    "data",
    [
        b"not xml",
        b"<other/>",
        b'<event id="1" ts="1.0" agent="a" kind="k"><content/></event>',
        b'<event id="x" ts="1.0" agent="a" kind="k"><content/><attrs/></event>',
        b'<event id="1" ts="1.0" agent="a" kind="k"><content/><attrs><attr>v</attr></attrs>'
        b"</event>",
        b'<event id="1" ts="1.0" agent="a" kind="k"><content/><attrs>'
        b'<attr name="d">1</attr><attr name="d">2</attr></attrs></event>',
    ],
)
def test_records_that_break_the_schema_are_corrupt(data: bytes) -> None:
    with pytest.raises(CorruptFrameError):
        decode_event(data)


def test_entities_are_not_expanded() -> None:
    data = (b'<!DOCTYPE event [<!ENTITY x "boom">]><event id="1" ts="1.0" agent="a" '
            b'kind="k"><content>&x;</content><attrs/></event>')
    try:
        event = decode_event(data)
    except CorruptFrameError:
        return
    assert "boom" not in event.content


# Records written before the fast writer was rebuilt (one f-string, one encode, one C0
# scan per record): homes written then must read the same, and new records must match.
PINNED_RECORDS = [
    ((1, 1.0, "Main", "message", "", None),
     b'<event id="1" ts="1.0" agent="Main" kind="message"><content></content><attrs/>'
     b"</event>"),
    ((42, 1700000000.25, "Supervisor", "cue",
      'a & b < c > d "q" \t tab\r\nline \u00e9 \u20ac \U0001f600',
      {"dia_id": "D1:3", 'k "&<\t\n>': "v\r\n&"}),
     b'<event id="42" ts="1700000000.25" agent="Supervisor" kind="cue"><content>a &amp; b '
     b'&lt; c &gt; d "q" \t tab&#13;&#10;line \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80'
     b'</content><attrs><attr name="dia_id">D1:3</attr><attr name="k &quot;&amp;&lt;&#9;'
     b'&#10;&gt;">v&#13;&#10;&amp;</attr></attrs></event>'),
    ((2**40, -0.0, 'A\tB"C', "fact", "x" * 10, {}),
     b'<event id="1099511627776" ts="-0.0" agent="A&#9;B&quot;C" kind="fact"><content>'
     b"xxxxxxxxxx</content><attrs/></event>"),
]


@pytest.mark.parametrize(("fields", "expected"), PINNED_RECORDS)
def test_the_record_bytes_do_not_change(fields: tuple, expected: bytes) -> None:  # type: ignore[type-arg]
    assert encode_event(*fields) == expected


def test_a_str_subclass_is_written_as_its_characters() -> None:
    class Loud(str):
        def __str__(self) -> str:
            return "LOUD"

        def __format__(self, spec: str) -> str:
            return "LOUD"

    data = encode_event(1, 1.0, "Main", "message", Loud("quiet"), {Loud("k"): Loud("v")})
    assert data == encode_event(1, 1.0, "Main", "message", "quiet", {"k": "v"})
