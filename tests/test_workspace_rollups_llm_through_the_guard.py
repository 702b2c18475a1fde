"""Issue 10 §Roll-ups: deterministic by default (the ladder's extractive summariser);
with ``summary_mode = "llm"`` the model's summary is kept only if the guard accepts it,
else the extractive form; a failing model changes nothing."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from solace.config.schema import Config, WorkspaceConfig
from solace.models import WordPieceTokenizer
from solace.models.guard import Guard
from solace.models.llm import LLMStats, LLMUnavailableError, NoLLM
from solace.workspace.rollup import Summariser
from tests.workspace_fixtures import DAY, ManualClock, workspace_home

LINES = ["Caroline moved to Boston on 3 May 2026 with her partner Dana.",
         "Caroline and Dana adopted a cat called Pixel in Boston.",
         "The weather was nice and they had a lovely afternoon walking around the park."]


class ScriptedLLM:
    name = "scripted"

    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.stats = LLMStats()
        self.calls = 0

    def complete(self, messages: Sequence[Any], *, max_tokens: int = 256,
                 temperature: float = 0.0) -> str:
        self.calls += 1
        return self.answer


def _summarise(llm: Any) -> tuple[list[str], Summariser]:
    tok = WordPieceTokenizer()
    s = Summariser(tok, llm, Guard(tokenizer=tok) if llm is not None else None)
    return s(LINES, 40), s


def test_deterministic_by_default_every_line_comes_from_the_source() -> None:
    out, s = _summarise(None)
    assert out and all(line in LINES for line in out) and s.llm_calls == 0


def test_an_llm_summary_the_guard_accepts_is_kept() -> None:
    good = "Caroline moved to Boston on 3 May 2026 with Dana; they adopted Pixel."
    out, s = _summarise(ScriptedLLM(f"- {good}"))
    assert out == [good] and (s.llm_calls, s.llm_accepted) == (1, 1)


def test_an_llm_summary_that_invents_is_refused_for_the_extractive_form() -> None:
    out, s = _summarise(ScriptedLLM("Caroline moved to Chicago in 2019 with Dana."))
    assert out == _summarise(None)[0] and (s.llm_calls, s.llm_accepted) == (1, 0)


def test_a_failing_llm_leaves_the_extractive_form() -> None:
    out, s = _summarise(NoLLM())
    assert out == _summarise(None)[0] and s.llm_accepted == 0
    assert issubclass(LLMUnavailableError, Exception)


async def test_summary_mode_llm_writes_guarded_weekly_rollups(tmp_path: Path) -> None:
    config = dataclasses.replace(Config(), workspace=WorkspaceConfig(summary_mode="llm"))
    llm = ScriptedLLM("Caroline moved to Chicago in 2019.")  # invents: always refused
    clock = ManualClock()
    async with workspace_home(tmp_path, clock, config, llm=llm,
                              guard=Guard(tokenizer=WordPieceTokenizer())) as b:
        for line in LINES:
            await b.remember(line)
            clock.t += DAY
        written = await b.ws.rollup()
        assert "memory/weekly/2026-W39.md" in written and llm.calls >= 3
        text = (b.files / "memory/weekly/2026-W39.md").read_text()
        assert "Chicago" not in text and "Pixel" in text
