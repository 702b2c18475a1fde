"""A rehydrated cue counts as used only if Main showed it to the model, and only for
the content it added there (terms not in the query, the thread, the facts or another
shown record), judged through Main's real turn."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from runtime_support import START, ScriptedLLM

import solace.actors.main_actor as main_actor
from solace import ReplayClock, open_runtime
from solace.config import AgentConfig, Config, MemoryConfig, ModelsConfig, SubstrateConfig
from solace.memory.record import Hit, ScoreParts
from solace.memory.rehydration import ReasoningStep

# Six turns five hours apart: with a 30-token working budget the first four fade to
# long-term, one record each (rung 2), and the last two stay in working.
LINES = [
    ("Caroline", "I started a pottery class at the studio with my friend Jolene."),
    ("Melanie", "My friend Jolene baked sourdough bread on Sunday."),
    ("Caroline", "I moved here from Sweden four years ago."),
    ("Melanie", "We finally bought a violin for my daughter."),
    ("Caroline", "The adoption agency called me back about the interview."),
    ("Melanie", "The museum trip with the kids was wonderful."),
]
# Repeats two words only the pottery turn holds ("started", "studio").
OWN_WORDS = "You started it at the studio with your friend Jolene."
# Repeats words of the pottery turn that the question or the bread turn holds too.
SHARED_WORDS = "Your friend Jolene joined the pottery class."


def config() -> Config:
    return Config(
        models=ModelsConfig(embedder="hashing", llm_backend="none"),
        substrate=SubstrateConfig(fsync="never"),
        memory=MemoryConfig(rehydrate_threshold=0.0),  # every long-term hit is a cue
        agents={"Main": AgentConfig(budget_tokens=30)},
    )


async def ask_after_fading(tmp_path: Path, question: str, answer: str, *,
                           compact: bool = True) -> tuple[Any, ScriptedLLM, dict]:
    """Observe LINES, let them fade, ask ``question`` a day later; Main answers ``answer``
    (from the short prompt of a small model if ``compact``, else the context stack).

    Returns the runtime's Main memory, the LLM (its prompts) and the long-term
    records as they were before the turn, by their text.
    """
    clock = ReplayClock(START)
    async with open_runtime(tmp_path, config(), clock=clock) as rt:
        for i, (speaker, text) in enumerate(LINES):
            await rt.agent("Main").observe(text, speaker=speaker,
                                           at=START + timedelta(hours=5 * i))
        await rt.settle()
        memory = rt.memories["Main"]
        before = {r.text: r for r in memory.longterm.records()}
        llm = ScriptedLLM(answer)
        rt.agent("Main").llm = llm
        rt.agent("Main").compact_prompt = compact
        clock.advance(24 * 3600)
        speech = await rt.ask(question)
        assert speech.text == answer  # the model's reply was kept as it is
        await rt.settle()
        return memory, llm, before


def record_with(records: dict, *words: str) -> Any:
    (record,) = [r for text, r in records.items() if all(w in text for w in words)]
    return record


def prompt_text(llm: ScriptedLLM) -> str:
    (messages,) = llm.prompts
    return "\n".join(m["content"] for m in messages)


async def test_a_shown_cue_whose_added_content_the_answer_uses_reenters_working(
    tmp_path: Path,
) -> None:
    memory, llm, before = await ask_after_fading(tmp_path, "How was the pottery class?",
                                                 OWN_WORDS)
    cue = record_with(before, "pottery", "Jolene")
    assert cue.text in prompt_text(llm)
    # "started", "studio", "friend", "Jolene": in the answer and the cue, nowhere else shown.
    assert memory.longterm.get(cue.record_id) is None
    assert memory.working.get(cue.record_id) is not None
    bread = record_with(before, "sourdough")
    assert bread.text not in prompt_text(llm)  # also says "friend Jolene": not shown
    assert memory.longterm.get(bread.record_id) is not None


@pytest.mark.parametrize("budget", ["room for the cue", "no room for the cue"])
async def test_a_cue_left_out_of_the_prompt_by_the_memory_budget_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, budget: str,
) -> None:
    question = "How were the museum trip and the pottery class?"
    if budget == "no room for the cue":
        # The museum turn ranks first; the budget holds it and not the cue after it.
        monkeypatch.setattr(main_actor, "MEMORY_TOKENS", 12)
    memory, llm, before = await ask_after_fading(tmp_path, question, OWN_WORDS)
    cue = record_with(before, "pottery", "Jolene")
    shown = prompt_text(llm)
    assert "museum trip" in shown
    if budget == "room for the cue":
        assert cue.text in shown
        assert memory.working.get(cue.record_id) is not None
    else:
        assert cue.text not in shown  # yet the answer repeats words only it holds
        assert memory.working.get(cue.record_id) is None
        assert memory.longterm.get(cue.record_id) == cue  # unchanged


async def test_a_cue_whose_shared_words_are_in_the_query_or_another_shown_hit_is_not_used(
    tmp_path: Path,
) -> None:
    # The question names both the pottery class and the bread, so both turns are shown;
    # the answer's "friend Jolene" is in both, "pottery class" in the question.
    question = "Did the pottery class or the sourdough bread come first?"
    memory, llm, before = await ask_after_fading(tmp_path, question, SHARED_WORDS)
    cue = record_with(before, "pottery", "Jolene")
    bread = record_with(before, "sourdough")
    shown = prompt_text(llm)
    assert cue.text in shown and bread.text in shown
    for record in (cue, bread):
        assert memory.working.get(record.record_id) is None
        assert memory.longterm.get(record.record_id) == record


@pytest.mark.parametrize("prompt", ["context stack", "short prompt"])
async def test_a_cue_counts_as_shown_by_the_prompt_the_model_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, prompt: str,
) -> None:
    # Short-prompt memory lines cut after 20 characters: a small model reads
    # "Caroline started pot…" ("studio", "friend" and "Jolene" cut off); a capable
    # model reads the whole cue in the context stack.
    monkeypatch.setattr(main_actor, "MEMORY_LINE_CHARS", 20)
    memory, llm, before = await ask_after_fading(tmp_path, "How was the pottery class?",
                                                 OWN_WORDS, compact=prompt == "short prompt")
    cue = record_with(before, "pottery", "Jolene")
    if prompt == "context stack":
        assert cue.text in prompt_text(llm)
        assert memory.working.get(cue.record_id) is not None
    else:
        assert cue.text not in prompt_text(llm) and cue.text[:20] in prompt_text(llm)
        assert memory.longterm.get(cue.record_id) == cue


# ------------------------------------------------ the rule itself, on a bare step


def hit(record_id: int, text: str, *, tier: str = "longterm", owner: str | None = None
        ) -> Hit:
    return Hit(record_id=record_id, agent="Main", tier=tier, rung=2, text=text,  # type: ignore[arg-type]
               tokens=len(text.split()), entry_ids=(record_id,), score=1.0,
               parts=ScoreParts(), owner=owner)


def step_of(query: str, *hits: Hit) -> ReasoningStep:
    return ReasoningStep(query, list(hits), [h for h in hits if h.tier == "longterm"
                                              and h.owner is None])


def test_terms_in_the_query_or_the_context_are_not_content_a_cue_added() -> None:
    cue = hit(1, "Caroline adopted a grey kitten named Biscuit")
    answer = "The kitten is named Biscuit."
    assert step_of("what about the kitten named Biscuit?", cue).detect_use(answer) == []
    assert step_of("what about her?", cue).detect_use(answer, context=[
        "user: my kitten Biscuit is asleep"]) == []
    assert step_of("what about her?", cue).detect_use(answer) == [cue]


def test_only_shown_hits_are_used_and_each_by_the_text_it_was_shown_as() -> None:
    cue, other = hit(1, "Caroline adopted a grey kitten named Biscuit"), hit(2, "violin")
    step = step_of("what about her?", cue, other)
    step.show([])  # nothing was shown
    assert step.detect_use("The kitten is named Biscuit.") == []
    step.show([(cue, "Caroline adopted a grey…")])  # cut short: the name was not shown
    assert step.detect_use("The kitten is named Biscuit.") == []
    assert step.detect_use("She adopted a grey one.") == [cue]
    with pytest.raises(ValueError, match="record 9 .* is not a hit of this step"):
        step.show([hit(9, "elsewhere")])


def test_two_hits_of_one_record_are_one_source_and_a_peers_hit_is_another() -> None:
    episode = hit(1, "Caroline adopted a grey kitten; she named it Biscuit")
    unit = hit(1, "Caroline named the kitten Biscuit")  # one event of the same record
    peer = hit(5, "Mood: the kitten Biscuit made Caroline happy", owner="Mood")
    answer = "Biscuit is a grey kitten."
    assert step_of("and then?", episode, unit).detect_use(answer) == [episode]
    assert step_of("and then?", episode, unit, peer).detect_use(answer) == []
