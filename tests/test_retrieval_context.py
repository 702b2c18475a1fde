"""A turn closes a share of the gap to the best score among the turns said next to it
in the asker's memory (its ``context`` part): a reply is found by the question it
answers, and a worse neighbour lifts nothing. Adjacency counts the events the agent
holds, summaries neither give nor take, and a weight of 0 leaves every score as it
was."""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from runtime_support import START

from solace import ReplayClock, open_runtime
from solace.app import Solace
from solace.config import (
    AgentConfig,
    Config,
    ModelsConfig,
    RetrievalWeights,
    RuntimeConfig,
    SubstrateConfig,
)
from solace.memory.adjacent import context_scores
from solace.memory.record import Hit


def every_id_held(first: int, last: int) -> int:
    return max(last - first - 1, 0)


def own_score(hit: Hit) -> float:
    return hit.score - hit.parts.context


def test_a_turn_closes_its_share_of_the_gap_to_the_best_turn_within_reach() -> None:
    entries = np.array([10, 11, 12, 14, 30])
    totals = np.array([0.2, 0.9, 0.4, 0.7, 1.0])
    got = context_scores(entries, totals, every_id_held, 0.5, reach=2)
    # 10 sees 11 and 12; 11 sees 10 and 12 (not 14: two held events between);
    # 12 sees 10, 11 and 14; 14 sees 12; 30 sees nothing
    assert got.tolist() == pytest.approx([0.35, 0.0, 0.25, 0.0, 0.0])


def test_a_worse_neighbour_lifts_nothing_so_a_run_of_near_copies_stays_below_a_better_turn(
) -> None:
    entries = np.array([1, 2, 3, 4, 40])
    totals = np.array([0.80, 0.81, 0.79, 0.80, 0.95])  # near-copies said together, then one
    got = totals + context_scores(entries, totals, every_id_held, 0.5)
    assert got.max() == got[4] and got[:4].max() < 0.81 + 1e-9


def test_adjacency_counts_only_the_events_the_agent_holds() -> None:
    entries = np.array([100, 120])
    totals = np.array([0.5, 0.8])
    assert context_scores(entries, totals, lambda a, b: 0, 1.0).tolist() == \
        pytest.approx([0.3, 0.0])
    assert context_scores(entries, totals, lambda a, b: 0, 1.0, span=10).tolist() == [0, 0]
    assert context_scores(entries, totals, every_id_held, 1.0).tolist() == [0.0, 0.0]


def test_summaries_and_second_copies_of_one_event_neither_give_nor_take() -> None:
    entries = np.array([5, -1, 5, 6])
    totals = np.array([0.3, 2.0, 0.1, 0.9])
    got = context_scores(entries, totals, every_id_held, 1.0)
    assert got.tolist() == pytest.approx([0.6, 0.0, 0.8, 0.0])


LINES = [
    ("Jon", "Which city did you move to after the new job offer?"),
    ("Gina", "Lisbon. The light there is lovely in the mornings."),
    ("Jon", "My dog chewed the sofa again yesterday."),
    ("Gina", "I started a pottery class at the community centre."),
    ("Jon", "The job offer came with a city apartment too, right?"),
    ("Gina", "We watched a film about the sea on Sunday."),
]


def config(context: float) -> Config:
    main = AgentConfig(retrieval=RetrievalWeights(context=context))
    agents = dict(Config().agents)
    agents["Main"] = main
    return Config(models=ModelsConfig(embedder="hashing", llm_backend="none"),
                  substrate=SubstrateConfig(fsync="never"), agents=agents,
                  runtime=dataclasses.replace(RuntimeConfig(), follow_replies=False))


async def test_recall_raises_the_reply_to_a_matching_question_unless_weighted_zero(
    tmp_path: Path,
) -> None:
    query = "Which city did Gina move to for the job?"
    ranks = {}
    for context in (0.5, 0.0):
        async with open_runtime(tmp_path / str(context), config(context),
                                clock=ReplayClock(START)) as rt:
            for i, (speaker, text) in enumerate(LINES):
                await rt.agent("Main").observe(text, speaker=speaker,
                                               at=START + i * timedelta(minutes=1))
            await rt.settle()
            hits = await rt.agent("Main").recall(query, k=6)
            cited = await Solace(rt).recall(query, k=6)
        reply = next(h for h in hits if "Lisbon" in h.text)
        asked = next(h for h in hits if "Which city" in h.text)
        ranks[context] = hits.index(reply)
        if context:  # the question is the best of the turns next to the reply
            assert reply.parts.context == pytest.approx(
                context * (own_score(asked) - own_score(reply)), rel=1e-6)
            assert asked.parts.context == 0.0  # its neighbours score below it
            assert reply.score == pytest.approx(reply.parts.total)
            shown = next(h for h in cited if "Lisbon" in h.text)  # what /recall shows
            assert shown.context == pytest.approx(reply.parts.context)
            assert all(h.score == pytest.approx(h.relevance + h.lexical + h.recency + h.emotion
                                                 + h.tags + h.context) for h in cited)
        else:
            assert all(h.parts.context == 0.0 for h in hits)
    assert ranks[0.5] < ranks[0.0]
