"""LLM compression at rung 2: batched, guarded, and never able to lose or corrupt memory."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest

from solace.config import MemoryConfig
from solace.memory.ladder import Ladder
from solace.memory.record import MemoryRecord
from solace.models import (
    ChatMessage,
    HashingEmbedder,
    LLMStats,
    LLMUnavailableError,
    WordPieceTokenizer,
)

DAY = 86400.0
TEXTS = [
    "Caroline went to a LGBTQ support group on 7 May 2023 and it was so powerful.\n"
    "Caroline: The transgender stories were so inspiring and she felt thankful for the support.",
    "Melanie ran a charity race for mental health the Saturday before 25 May 2023.\n"
    "Melanie is carving out some time each day for running, reading and her violin.",
    "Caroline has known these friends for 4 years, since Caroline moved from Sweden.\n"
    "Caroline: Their love and help have been so important after that tough breakup.",
]


class FakeLLM:
    """Answers ``complete_json`` with ``answer(prompt)``, or raises ``error``."""

    name = "fake"

    def __init__(
        self,
        answer: Callable[[str], Any] | None = None,
        error: Exception | None = None,
    ) -> None:
        self.answer = answer
        self.error = error
        self.stats = LLMStats()
        self.prompts: list[str] = []

    def complete(self, messages: Sequence[ChatMessage], *, max_tokens: int = 256,
                 temperature: float = 0.0) -> str:  # fmt: skip
        raise AssertionError("the ladder only asks for JSON")

    def complete_json(self, messages: Sequence[ChatMessage], schema: Mapping[str, Any], *,
                      max_tokens: int = 512) -> dict[str, Any]:  # fmt: skip
        prompt = messages[-1]["content"]
        self.prompts.append(prompt)
        self.stats.record(generated_tokens=17, failed=self.error is not None)
        if self.error is not None:
            raise self.error
        assert self.answer is not None
        result: dict[str, Any] = self.answer(prompt)
        return result


@pytest.fixture(scope="module")
def tokenizer() -> WordPieceTokenizer:
    return WordPieceTokenizer()


def rung1_records(
    tokenizer: WordPieceTokenizer, texts: Sequence[str] = TEXTS
) -> list[MemoryRecord]:
    # a week apart: separate episodes, so nothing merges and each is its own job
    return [
        MemoryRecord(
            record_id=i + 1, agent="Main", rung=1, text=text, tokens=tokenizer.count(text),
            source_tokens=200, entry_ids=(10 * (i + 1), 10 * (i + 1) + 1),
            speakers=("Caroline", "Melanie"), first_event_ts=1.7e9 + 7 * DAY * i,
            event_ts=1.7e9 + 7 * DAY * i,
        )  # fmt: skip
        for i, text in enumerate(texts)
    ]


def llm_ladder(tokenizer: WordPieceTokenizer, llm: FakeLLM, **config: Any) -> Ladder:
    config.setdefault("llm_max_calls_per_event", 0.0)  # no call budget unless a test sets one
    return Ladder(tokenizer=tokenizer, embedder=HashingEmbedder(), llm=llm,
                  config=MemoryConfig(compression="llm", **config))  # fmt: skip


def deterministic(tokenizer: WordPieceTokenizer, records: list[MemoryRecord]) -> list[str]:
    lad = Ladder(tokenizer=tokenizer, embedder=HashingEmbedder(), config=MemoryConfig())
    return [d.record.text for d in lad.demote(records, now=0.0)]


def assert_nothing_lost(records: list[MemoryRecord], out: list[MemoryRecord]) -> None:
    assert sorted(e for r in out for e in r.entry_ids) == sorted(
        e for r in records for e in r.entry_ids
    )
    assert all(r.rung == 2 and r.text for r in out)


@pytest.mark.parametrize(
    "garbage",
    [{"summaries": "nope"}, {"foo": 1}, {"summaries": [{"id": "1", "summary": "x"}]}, []],
)
def test_llm_garbage_falls_back_to_deterministic_and_is_counted(
    tokenizer: WordPieceTokenizer, garbage: Any
) -> None:
    records = rung1_records(tokenizer)
    llm = FakeLLM(answer=lambda prompt: garbage)
    lad = llm_ladder(tokenizer, llm)
    out = [d.record for d in lad.demote(records, now=0.0)]
    assert [r.text for r in out] == deterministic(tokenizer, records)
    assert_nothing_lost(records, out)
    assert (lad.stats.llm_calls, lad.stats.llm_failures) == (1, 1)
    assert lad.stats.guard_accepted == 0


@pytest.mark.parametrize("error", [LLMUnavailableError("down"), RuntimeError("backend bug")])
def test_llm_that_raises_falls_back_to_deterministic_and_is_counted(
    tokenizer: WordPieceTokenizer, error: Exception
) -> None:
    records = rung1_records(tokenizer)
    lad = llm_ladder(tokenizer, FakeLLM(error=error))
    out = [d.record for d in lad.demote(records, now=0.0)]
    assert [r.text for r in out] == deterministic(tokenizer, records)
    assert_nothing_lost(records, out)
    assert (lad.stats.llm_calls, lad.stats.llm_failures) == (1, 1)
    assert lad.stats.generated_tokens == 17


def test_an_llm_answer_that_invents_a_name_is_rejected_by_the_guard(
    tokenizer: WordPieceTokenizer,
) -> None:
    records = rung1_records(tokenizer, TEXTS[:1])
    invented = "Caroline and Bob went to a LGBTQ support group on 7 May 2023."
    llm = FakeLLM(answer=lambda p: {"summaries": [{"id": 1, "summary": invented}]})
    lad = llm_ladder(tokenizer, llm)
    out = [d.record for d in lad.demote(records, now=0.0)]
    assert [r.text for r in out] == deterministic(tokenizer, records)
    assert "Bob" not in out[0].text
    assert (lad.stats.guard_rejected, lad.stats.guard_accepted) == (1, 0)


def test_a_faithful_llm_answer_is_used(tokenizer: WordPieceTokenizer) -> None:
    records = rung1_records(tokenizer, TEXTS[:1])
    good = "Caroline went to a LGBTQ support group on 7 May 2023; transgender stories inspired her."
    llm = FakeLLM(answer=lambda p: {"summaries": [{"id": 1, "summary": good}]})
    lad = llm_ladder(tokenizer, llm)
    (out,) = [d.record for d in lad.demote(records, now=0.0)]
    assert out.text == good and out.tokens == tokenizer.count(good)
    assert lad.stats.guard_accepted == 1 and lad.stats.salient_in > 0


def test_an_llm_answer_far_over_the_rung_size_is_refused(tokenizer: WordPieceTokenizer) -> None:
    records = rung1_records(tokenizer, TEXTS[:1])
    # faithful, shorter than its source and within the schema's character cap, but more
    # than 1.5x the rung's size (budget 20 tokens)
    long = "Caroline (LGBTQ): support group, 7 May 2023 -- powerful!! Transgender stories -- " \
        "inspiring!! Support -- thankful!!"
    fallback = deterministic(tokenizer, records)
    assert len(long) <= 20 * 1.5 * 4.5
    assert tokenizer.count(long) > 30 >= tokenizer.count(fallback[0])
    llm = FakeLLM(answer=lambda p: {"summaries": [{"id": 1, "summary": long}]})
    lad = llm_ladder(tokenizer, llm)
    out = [d.record for d in lad.demote(records, now=0.0)]
    assert [r.text for r in out] == fallback
    assert (lad.stats.llm_too_long, lad.stats.guard_accepted, lad.stats.llm_failures) == (1, 0, 0)


def test_one_llm_call_per_batch_and_a_missing_record_gets_the_deterministic_form(
    tokenizer: WordPieceTokenizer,
) -> None:
    records = rung1_records(tokenizer)
    first = "Caroline went to LGBTQ support group 7 May 2023."
    third = "Caroline has known friends 4 years, moved from Sweden."
    llm = FakeLLM(
        answer=lambda p: {"summaries": [{"id": 1, "summary": first}, {"id": 3, "summary": third}]}
    )
    lad = llm_ladder(tokenizer, llm)
    out = [d.record for d in lad.demote(records, now=0.0)]
    assert len(llm.prompts) == 1
    assert all(text.split("\n")[0] in llm.prompts[0] for text in TEXTS)
    assert [r.text for r in out] == [first, deterministic(tokenizer, records[1:2])[0], third]
    assert lad.stats.llm_missing == 1 and lad.stats.guard_accepted == 2
    assert_nothing_lost(records, out)


def test_batches_are_bounded_by_llm_batch_records(tokenizer: WordPieceTokenizer) -> None:
    records = rung1_records(tokenizer, TEXTS + TEXTS[:2])
    llm = FakeLLM(answer=lambda p: {"summaries": []})
    lad = llm_ladder(tokenizer, llm, llm_batch_records=2)
    lad.demote(records, now=0.0)
    assert lad.stats.llm_calls == len(llm.prompts) == 3
    assert lad.stats.llm_missing == 5


def test_deterministic_compression_never_calls_the_llm(tokenizer: WordPieceTokenizer) -> None:
    llm = FakeLLM(error=AssertionError("must not be called"))
    lad = Ladder(tokenizer=tokenizer, embedder=HashingEmbedder(), llm=llm, config=MemoryConfig())
    lad.demote(rung1_records(tokenizer), now=0.0)
    assert llm.prompts == [] and lad.stats.llm_calls == 0


def test_a_second_agent_fading_the_same_episode_reuses_the_verdict_without_a_call(
    tokenizer: WordPieceTokenizer,
) -> None:
    good = "Caroline went to a LGBTQ support group on 7 May 2023; transgender stories inspired her."
    llm = FakeLLM(answer=lambda p: {"summaries": [{"id": 1, "summary": good}]})
    lad = llm_ladder(tokenizer, llm)
    mains = rung1_records(tokenizer)
    first = [d.record.text for d in lad.demote(mains, now=0.0)]
    supervisors = [dataclasses.replace(r, agent="Supervisor") for r in mains]
    second = [d.record.text for d in lad.demote(supervisors, now=0.0)]
    assert second == first and first[0] == good
    assert lad.stats.llm_calls == len(llm.prompts) == 1
    assert lad.stats.llm_reused == 3


MOODS = ["calm", "warm", "bright", "long", "quiet", "late", "grey"]
VARIANTS = [f"{TEXTS[0]} It felt {a} and {b}." for a in MOODS for b in MOODS if a != b]
GOOD = "Caroline went to a LGBTQ support group on 7 May 2023; transgender stories inspired her."
INVENTED = "Caroline and Bob went to a LGBTQ support group on 7 May 2023."


def test_a_model_the_guard_keeps_refusing_is_benched_and_probed_until_it_passes_again(
    tokenizer: WordPieceTokenizer,
) -> None:
    answer = {"summary": INVENTED}
    llm = FakeLLM(answer=lambda p: {"summaries": [{"id": 1, **answer}]})
    lad = llm_ladder(tokenizer, llm, llm_batch_records=1, llm_min_acceptance=0.1,
                     llm_probe_every=2)
    records = rung1_records(tokenizer, VARIANTS)
    lad.demote(records[:24], now=0.0)  # 24 refused pieces: the window is full of them
    assert lad.stats.llm_calls == 24 and lad.stats.guard_rejected == 24
    lad.demote(records[24:28], now=0.0)
    assert lad.stats.llm_calls == 26 and lad.stats.llm_skipped == 2  # probes: 2nd and 4th
    answer["summary"] = GOOD  # the model (or its prompt) got better
    out = lad.demote(records[28:36], now=0.0)
    # benched batches 5-10: probes at the 6th, 8th and 10th pass (3 of 24 >= 0.1), so
    # the last two go to the model straight away
    assert (lad.stats.llm_calls, lad.stats.llm_skipped) == (26 + 3 + 2, 2 + 3)
    assert lad.stats.guard_accepted == 5 and out[-1].record.text == GOOD
    assert all(r.rung == 2 and r.text for r in (d.record for d in out))


def test_a_min_acceptance_of_zero_never_benches_the_model(tokenizer: WordPieceTokenizer) -> None:
    llm = FakeLLM(answer=lambda p: {"summaries": [{"id": 1, "summary": INVENTED}]})
    lad = llm_ladder(tokenizer, llm, llm_batch_records=1, llm_min_acceptance=0.0)
    lad.demote(rung1_records(tokenizer, VARIANTS[:30]), now=0.0)
    assert lad.stats.llm_calls == 30 and lad.stats.llm_skipped == 0


def test_calls_stay_within_the_budget_per_compressed_event(tokenizer: WordPieceTokenizer) -> None:
    llm = FakeLLM(answer=lambda p: {"summaries": [{"id": 1, "summary": GOOD}]})
    lad = llm_ladder(tokenizer, llm, llm_batch_records=1, llm_max_calls_per_event=0.25)
    records = rung1_records(tokenizer, VARIANTS[:8])  # two events each
    outs = [lad.demote([record], now=0.0)[0].record for record in records]  # a pass each
    # the first call is free; then calls <= 0.25 x events seen (2 per record): calls
    # for records 1, 4, 6 and 8
    assert lad.stats.llm_calls == len(llm.prompts) == 4
    assert lad.stats.llm_over_budget == 4 and lad.stats.guard_accepted == 4
    assert [r.text == GOOD for r in outs] == [True, False, False, True, False, True, False, True]
    assert all(r.rung == 2 and r.text for r in outs)
