"""Issue 10 §MEMORY.md: synthesis goes through fact memory's ADD/UPDATE/NOOP/CONFLICT
classification, so MEMORY.md never holds a restatement twice nor two contradictory
bullets unmarked; a conversation excerpt never overrides a fact."""

from __future__ import annotations

from datetime import date

from solace.models import HashingEmbedder
from solace.workspace.markdown import Hasher, render
from solace.workspace.model import Doc, Item, Section
from solace.workspace.overlay import HumanLayer
from solace.workspace.synthesis import SynthesisCounts, synthesize_memory

H = Hasher(b"s" * 32)
D1, D2 = date(2026, 9, 21), date(2026, 9, 22)


def _day(day: date, *sections: tuple[str, list[str]]) -> tuple[date, Doc]:
    return day, Doc(str(day), (), tuple(Section(f"{day} {h}", tuple(Item(t) for t in items))
                                        for h, items in sections))


def _synth(*days: tuple[date, Doc]) -> tuple[str, SynthesisCounts]:
    doc, counts = synthesize_memory(list(days), HumanLayer(), H, HashingEmbedder().embed)
    return render(doc), counts


def test_a_restatement_is_dropped() -> None:
    text, counts = _synth(_day(D1, ("10:00 - Facts learned", ["Ann plays the cello."])),
                          _day(D2, ("09:00 - Facts learned", ["Ann plays the cello."])))
    assert text.count("Ann plays the cello.") == 1 and counts.noop == 1


def test_a_newer_value_of_a_decision_replaces_the_older_bullet() -> None:
    text, counts = _synth(_day(D1, ("10:00 - Decision: garden_visit", ["garden_visit: booked"])),
                          _day(D2, ("09:00 - Decision: garden_visit",
                                    ["garden_visit: cancelled"])))
    assert "garden_visit: cancelled" in text and "booked" not in text
    assert counts.updated == 1


def test_two_values_stated_at_the_same_moment_are_both_kept_and_marked() -> None:
    text, counts = _synth(_day(D1, ("10:00 - Decision: seat", ["seat: window"])),
                          _day(D1, ("10:00 - Decision: seat", ["seat: aisle"])))
    assert "- seat: window\n  <!-- CONFLICT: contradicts \"seat: aisle\" -->" in text
    assert "- seat: aisle\n  <!-- CONFLICT: contradicts \"seat: window\" -->" in text
    assert counts.conflicts == 1


def test_different_decisions_never_merge_and_sections_follow_subjects() -> None:
    text, _ = _synth(_day(D1, ("10:00 - Decision: garden_visit", ["garden_visit: booked"]),
                          ("10:01 - Decision: zoo_visit", ["zoo_visit: booked"]),
                          ("10:02 - Preferences", ["Ann prefers green tea."]),
                          ("10:03 - Topic: Trip", ["They chose Rome."])))
    assert "- garden_visit: booked" in text and "- zoo_visit: booked" in text
    other, counts = _synth(
        _day(D1, ("10:00 - Decision: Garden plans", ['Topic "Garden plans" promoted'])),
        _day(D2, ("10:00 - Decision: Zoo plans", ['Topic "Zoo plans" promoted'])))
    assert '- Topic "Garden plans" promoted' in other
    assert '- Topic "Zoo plans" promoted' in other and counts.updated == 0
    assert text.index("## Preferences") < text.index("## Decisions") < text.index("## Topics")


def test_a_conversation_excerpt_never_overrides_a_fact() -> None:
    text, _ = _synth(_day(D1, ("10:00 - Residence", ["Mel lives in Lisbon."])),
                     _day(D2, ("09:00 - Topic: Moving", ["Mel lives in Porto."])))
    assert "- Mel lives in Lisbon." in text and "- Mel lives in Porto." in text
    assert "<!-- CONFLICT" not in text
