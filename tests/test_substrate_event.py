"""Events and kinds: frozen records, a closed-but-extensible set of kind names."""

from __future__ import annotations

import dataclasses

import pytest

from substrate import BUILTIN_KINDS, Event, NewEvent
from substrate.event import check_kind_name, kinds_with


def test_the_builtin_kinds_are_the_eight_of_the_spec() -> None:
    assert BUILTIN_KINDS == {"reflection", "cue", "message", "tool_call", "tool_result",
                             "speech", "fact", "curation"}


@pytest.mark.parametrize("name", ["a", "mood_shift", "x9", "tool_call_2"])
def test_well_formed_kind_names_are_accepted(name: str) -> None:
    assert check_kind_name(name) == name
    assert name in kinds_with([name])


@pytest.mark.parametrize("name", ["", "Mood", "9x", "_x", "a-b", "a b", "é", "a" * 65])
def test_malformed_kind_names_are_refused_by_name(name: str) -> None:
    with pytest.raises(ValueError, match="bad kind name"):
        check_kind_name(name)


def test_a_bare_string_is_not_a_list_of_kinds() -> None:
    with pytest.raises(TypeError, match="iterable of names"):
        kinds_with("mood")
    with pytest.raises(TypeError):
        check_kind_name(3)


def test_events_are_frozen_slotted_and_compare_by_value() -> None:
    e = Event(1, 1.5, "Main", "message", "hi", {"dia_id": "D1:3"})
    assert not hasattr(e, "__dict__")
    with pytest.raises(dataclasses.FrozenInstanceError):
        e.content = "other"  # type: ignore[misc]
    assert e == Event(1, 1.5, "Main", "message", "hi", {"dia_id": "D1:3"})
    assert e != Event(1, 1.5, "Main", "message", "hi", {})
    assert len({e, Event(1, 1.5, "Main", "message", "hi", {"dia_id": "D1:3"})}) == 1


def test_event_attrs_are_a_read_only_copy() -> None:
    attrs = {"k": "v"}
    e = Event(1, 1.0, "a", "cue", "x", attrs)
    attrs["k"] = "changed"
    assert e.attrs == {"k": "v"}
    with pytest.raises(TypeError):
        e.attrs["k"] = "w"  # type: ignore[index]


def test_new_events_default_to_no_attrs_and_no_timestamp() -> None:
    n = NewEvent("Main", "message", "x")
    assert (n.attrs, n.ts) == (None, None)
