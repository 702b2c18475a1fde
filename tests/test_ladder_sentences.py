"""Rung-0 text convention and sentence/clause splitting."""

from __future__ import annotations

from solace.memory.ladder import format_raw
from solace.memory.ladder.sentences import split_clauses, split_sentences, split_turns


def test_format_raw_names_the_speaker() -> None:
    assert format_raw("Caroline", "I went.") == "Caroline: I went."
    assert format_raw("", "unattributed") == "unattributed"


def test_split_turns_recognises_only_known_speakers() -> None:
    text = "Caroline: Note: this is mine\nmore of it\nMelanie: hi"
    assert split_turns(text, ("Caroline", "Melanie")) == [
        ("Caroline", "Note: this is mine more of it"),
        ("Melanie", "hi"),
    ]
    assert split_turns("Note: no label", ("Caroline",)) == [("", "Note: no label")]


def test_split_sentences_keeps_abbreviations_and_words_ending_like_them() -> None:
    text = "Congrats on your dreams. Mr. Smith came! Did he?! Sure \U0001f31f fine"
    assert split_sentences(text) == [
        "Congrats on your dreams.",
        "Mr. Smith came!",
        "Did he?!",
        "Sure \U0001f31f fine",
    ]


def test_split_clauses_cuts_at_punctuation_and_conjunctions() -> None:
    assert split_clauses("I went home - it was late, and I slept because I was tired") == [
        "I went home",
        "it was late",
        "and I slept",
        "because I was tired",
    ]
