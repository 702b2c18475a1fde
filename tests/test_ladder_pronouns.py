"""'I' and 'you' in compressed forms name the people they mean."""

from __future__ import annotations

import pytest

from solace.memory.ladder import resolve_pronouns


@pytest.mark.parametrize(
    ("said", "meant"),
    [
        ("I went to a LGBTQ support group.", "Caroline went to a LGBTQ support group."),
        ("I'm swamped with work.", "Caroline is swamped with work."),
        ("I've known them for 4 years.", "Caroline has known them for 4 years."),
        ("I really love painting.", "Caroline really loves painting."),
        ("I'd love to support them.", "Caroline would love to support them."),
        ("I'd never been there.", "Caroline had never been there."),
        ("I don't know.", "Caroline doesn't know."),
        ("They told me about my sister.", "They told Caroline about Caroline's sister."),
        ("Did you hear any stories?", "Did Melanie hear any stories?"),
        ("Are you going?", "Is Melanie going?"),
        ("You'd be a great counselor!", "Melanie would be a great counselor!"),
        ("Your empathy will help.", "Melanie's empathy will help."),
        ("Have you tried it yet?", "Has Melanie tried it yet?"),
    ],
)
def test_i_and_you_resolve_to_speaker_and_addressee(said: str, meant: str) -> None:
    resolved, _ = resolve_pronouns(said, "Caroline", "Melanie")
    assert resolved == meant


def test_named_is_true_only_when_the_speaker_became_the_subject() -> None:
    assert resolve_pronouns("I went home", "Caroline", "Melanie")[1] is True
    assert resolve_pronouns("Gonna continue my studies", "Caroline", "Melanie")[1] is False
    assert resolve_pronouns("Good for you", "Caroline", "Melanie")[1] is False


def test_unknown_addressee_leaves_you_as_written() -> None:
    assert resolve_pronouns("Did you go?", "Caroline", "") == ("Did you go?", False)


def test_thank_you_and_the_filler_you_know_are_not_rewritten() -> None:
    resolved, _ = resolve_pronouns("Thank you! It's great, you know?", "Caroline", "Melanie")
    assert resolved == "Thank you! It's great."


def test_reflexives_stay_true_without_guessing_gender() -> None:
    resolved, _ = resolve_pronouns("Painting helps express yourself", "Caroline", "Melanie")
    assert resolved == "Painting helps express themself"
