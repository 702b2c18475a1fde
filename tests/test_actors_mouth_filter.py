"""Mouth's thought→speech filter: narration and credentials never become speech."""

from __future__ import annotations

import pytest

from solace.actors.mouth_filter import looks_like_credential, to_speech


def test_plain_answer_passes_unchanged() -> None:
    text = "Your sister's wedding is on 7 May 2023. I hope it goes well!"
    spoken = to_speech(text)
    assert spoken.text == text
    assert (spoken.dropped_narration, spoken.dropped_credentials) == (0, 0)


@pytest.mark.parametrize(
    "line",
    [
        "Thought: the user seems upset, be gentle",
        "Internal narration: recall found nothing",
        "(internal: checking long-term memory)",
        "[draft] maybe say hello",
        "Note to self: ask about the dog later",
        "*thinks about the question*",
        "Reasoning: two hits mention Sweden",
    ],
)
def test_internal_narration_lines_are_dropped(line: str) -> None:
    spoken = to_speech(f"Hello!\n{line}\nSee you.")
    assert spoken.text == "Hello!\nSee you."
    assert spoken.dropped_narration == 1


def test_think_blocks_are_dropped_whole() -> None:
    spoken = to_speech("<think>the key is in memory\nsecond line</think>The answer is 4.")
    assert spoken.text == "The answer is 4."
    assert "key" not in spoken.text


@pytest.mark.parametrize(
    "secret",
    [
        "sk-proj-abcdefghijklmnopqrstuvwx1234",
        "AKIAIOSFODNN7EXAMPLE",
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "password: hunter2",
        "api_key=abc123",
        "-----BEGIN RSA PRIVATE KEY-----",
        "0123456789abcdef0123456789abcdef0123",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcdefghijk",
    ],
)
def test_lines_with_credentials_are_dropped(secret: str) -> None:
    spoken = to_speech(f"Here you go.\nUse {secret} to log in.\nAnything else?")
    assert secret not in spoken.text
    assert spoken.text == "Here you go.\nAnything else?"
    assert spoken.dropped_credentials == 1


def test_ordinary_numbers_and_words_are_not_credentials() -> None:
    for line in ("I have 2 cats and 1234567890 reasons.", "The token count is small.",
                 "My password manager is great", "Call me at 555-1234"):
        assert not looks_like_credential(line), line


def test_a_draft_that_is_all_narration_is_silent() -> None:
    spoken = to_speech("Thought: nothing to say\nPlan: wait")
    assert spoken.silent and spoken.text == ""
