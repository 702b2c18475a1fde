"""Remembered pure functions of short texts (solace.models.remembered)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from solace.models.remembered import SHORT_TEXT_CHARS, remembered


def _counting() -> tuple[list[str], Callable[[str, int], str]]:
    calls: list[str] = []

    @remembered(2)
    def shout(text: str, times: int) -> str:
        calls.append(text)
        return text.upper() * times

    return calls, shout


def test_a_short_text_asked_again_is_not_worked_out_again() -> None:
    calls, shout = _counting()
    assert shout("hi", 2) == shout("hi", 2) == "HIHI"
    assert shout("hi", 3) == "HIHIHI"
    assert calls == ["hi", "hi"]  # the other argument is part of the key


def test_only_the_most_recent_results_are_kept() -> None:
    calls, shout = _counting()
    for text in ("a", "b", "c", "a"):
        shout(text, 1)
    assert calls == ["a", "b", "c", "a"]  # "a" had been let go for "c"


def test_a_long_text_is_worked_out_every_time_and_never_held() -> None:
    calls, shout = _counting()
    long = "x" * (SHORT_TEXT_CHARS + 1)
    shout(long, 1)
    shout(long, 1)
    assert len(calls) == 2
    info: Any = shout.cache_info  # type: ignore[attr-defined]
    assert info().currsize == 0
