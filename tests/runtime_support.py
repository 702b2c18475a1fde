"""Shared fixtures data for runtime-level tests (no tests here)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from solace.models.llm import LLMStats

START = datetime(2023, 5, 8, 9, 0, tzinfo=UTC)

# Eight LoCoMo-style turns, each about a different thing, so recall can tell them apart.
LINES = [
    ("Caroline", "I moved here from Sweden four years ago."),
    ("Melanie", "My kids and I went camping at the lake last weekend."),
    ("Caroline", "I started a pottery class with my friend Jolene."),
    ("Melanie", "I painted a sunrise over the ocean for my living room."),
    ("Caroline", "The adoption agency called me back about the interview."),
    ("Melanie", "We finally bought a violin for my daughter."),
    ("Caroline", "I ran a charity race for mental health on Saturday."),
    ("Melanie", "The museum trip with the kids was wonderful."),
]


async def fill(rt: Any, lines: Sequence[tuple[str, str]] = LINES) -> list[int]:
    """Main observes ``lines`` five minutes apart from START; the fade then settles."""
    ids = []
    for i, (speaker, text) in enumerate(lines):
        ids.append(await rt.agent("Main").observe(
            text, speaker=speaker, at=START + timedelta(minutes=5 * i)))
    await rt.settle()
    return ids


class ScriptedLLM:
    """Replies with a fixed text; records the prompts it was given."""

    name = "scripted"

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.prompts: list[Sequence[Any]] = []
        self.stats = LLMStats()

    def complete(self, messages: Sequence[Any], *, max_tokens: int = 256,
                 temperature: float = 0.0) -> str:
        self.prompts.append(messages)
        return self.reply

    def complete_json(self, messages: Sequence[Any], schema: Any, *,
                      max_tokens: int = 512) -> dict[str, Any]:
        raise NotImplementedError
