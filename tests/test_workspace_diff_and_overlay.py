"""The sans-IO core of human edits: a file reads back as written, a diff names what a
human added, removed, changed or moved, and the overlay keeps every one of them."""

from __future__ import annotations

from solace.workspace.markdown import Hasher, diff, item_pairs, parse, render
from solace.workspace.model import Doc, Item, Section
from solace.workspace.overlay import HumanLayer, apply

H = Hasher(b"k" * 32)
DOC = Doc("2026-09-21 (Monday)", ("<!-- machine -->",), (
    Section("2026-09-21 10:00 - Facts learned", (Item("Ann likes tea."), Item("Bo runs."))),
    Section("2026-09-21 11:00 - Topic: Trip", (Item("They chose Rome."),
                                               Item("Flights are booked.", "CLASH: x"))),
))


def test_a_rendered_file_reads_back_as_written() -> None:
    text = render(DOC)
    back = parse(text)
    assert back.items() == DOC.items() and back.title == DOC.title
    assert render(back).replace("  <!-- CLASH: x -->\n", "") == text.replace(
        "  <!-- CLASH: x -->\n", "")  # marks are comments, never content
    assert "<!-- CLASH: x -->" in text


def test_a_diff_names_added_removed_changed_and_moved_items() -> None:
    before = item_pairs(DOC, H)
    text = render(DOC).replace("- Bo runs.\n", "").replace("- They chose Rome.",
                                                           "- They chose Naples.")
    text = text.replace("- Ann likes tea.", "- Cy swims.\n- Ann likes tea.")
    text = text.replace("- Flights are booked.\n  <!-- CLASH: x -->\n", "")
    text += "\n## Later\n- Flights are booked.\n"
    edit = diff("memory/x.md", before, parse(text), H)
    assert edit.added == (("2026-09-21 10:00 - Facts learned", "Cy swims."),
                          ("Later", "Flights are booked."))
    assert edit.removed == (H.item("Bo runs."),)
    assert edit.changed == ((H.item("They chose Rome."), "2026-09-21 11:00 - Topic: Trip",
                             "They chose Naples."),)


def test_a_bullet_rewritten_in_place_is_a_change_not_a_removal() -> None:
    text = render(DOC).replace("- Bo runs.", "- Bo runs marathons.")
    edit = diff("f", item_pairs(DOC, H), parse(text), H)
    assert (edit.added, edit.removed) == ((), ())
    assert edit.changed == ((H.item("Bo runs."), "2026-09-21 10:00 - Facts learned",
                             "Bo runs marathons."),)


def test_an_unchanged_file_has_an_empty_diff_and_punctuation_is_not_a_change() -> None:
    assert diff("f", item_pairs(DOC, H), parse(render(DOC)), H).empty
    assert diff("f", item_pairs(DOC, H), parse(render(DOC).replace("Bo runs.", "bo runs")),
                H).empty


def test_the_overlay_keeps_every_human_edit_over_a_fresh_render() -> None:
    layer = HumanLayer()
    text = render(DOC).replace("- Bo runs.\n", "").replace("- They chose Rome.",
                                                           "- They chose Naples.")
    text += "\n## 2026-09-21 09:00 - Morning\n- Coffee first.\n"
    layer.fold(diff("f", item_pairs(DOC, H), parse(text), H), 1.0, H)
    fresh = Doc(DOC.title, DOC.preamble, (
        *DOC.sections, Section("2026-09-21 12:00 - Facts learned", (Item("Di sings."),))))
    out = apply(fresh, layer, H)
    assert [s.header for s in out.sections] == [
        "2026-09-21 09:00 - Morning", "2026-09-21 10:00 - Facts learned",
        "2026-09-21 11:00 - Topic: Trip", "2026-09-21 12:00 - Facts learned"]
    assert out.items() == [
        ("2026-09-21 09:00 - Morning", "Coffee first."),
        ("2026-09-21 10:00 - Facts learned", "Ann likes tea."),
        ("2026-09-21 11:00 - Topic: Trip", "They chose Naples."),
        ("2026-09-21 11:00 - Topic: Trip", "Flights are booked."),
        ("2026-09-21 12:00 - Facts learned", "Di sings.")]


def test_a_readded_bullet_comes_back_and_a_rewritten_human_bullet_replaces_itself() -> None:
    layer = HumanLayer()
    base = item_pairs(DOC, H)
    removed = parse(render(DOC).replace("- Bo runs.\n", ""))
    layer.fold(diff("f", base, removed, H), 1.0, H)
    assert "Bo runs." not in [t for _, t in apply(DOC, layer, H).items()]
    readded = parse(render(removed) + "- Bo runs.\n")
    layer.fold(diff("f", item_pairs(removed, H), readded, H), 2.0, H)
    assert "Bo runs." in [t for _, t in apply(DOC, layer, H).items()]
