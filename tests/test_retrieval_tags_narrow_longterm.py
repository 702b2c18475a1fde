"""Tags given to recall narrow long-term search to the records carrying them (seed 002:
"long-term answers semantically, by embedding similarity narrowed by tags"); working
records still compete, and without tags nothing is narrowed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from runtime_support import START

from solace import ReplayClock, open_runtime
from solace.app import AppError, Solace
from solace.config import AgentConfig, Config, ModelsConfig, SubstrateConfig

QUERY = "quarterly budget report"
# Six turns five hours apart: with a 30-token working budget Main's first three fade to
# long-term, one record each; the last three stay in working.
LINES = [
    ("Caroline", "The quarterly numbers for the client are due on Friday.", ("work",)),
    ("Melanie", "My quarterly budget report for the book club is finished.", ()),
    ("Caroline", "I moved here from Sweden four years ago.", ()),
    ("Melanie", "We finally bought a violin for my daughter.", ()),
    ("Caroline", "The adoption agency called me back about the interview.", ("Work",)),
    ("Melanie", "The museum trip with the kids was wonderful.", ()),
]


def config() -> Config:
    return Config(
        models=ModelsConfig(embedder="hashing", llm_backend="none"),
        substrate=SubstrateConfig(fsync="never"),
        agents={"Main": AgentConfig(budget_tokens=30)},
    )


@asynccontextmanager
async def faded(tmp_path: Path) -> AsyncIterator[tuple[Any, dict[str, Any]]]:
    """A runtime whose Main holds LINES, three of them faded; its records by first word."""
    async with open_runtime(tmp_path, config(), clock=ReplayClock(START)) as rt:
        for i, (speaker, text, tags) in enumerate(LINES):
            await rt.agent("Main").observe(text, speaker=speaker, tags=tags,
                                           at=START + timedelta(hours=5 * i))
        await rt.settle()
        memory = rt.memories["Main"]
        records = {}
        for record in [*memory.working.records(), *memory.longterm.records()]:
            for key in ("quarterly numbers", "budget report", "Sweden", "adoption"):
                if key in record.text:
                    records[key] = record
        assert {k: memory.longterm.get(r.record_id) is not None for k, r in records.items()} \
            == {"quarterly numbers": True, "budget report": True, "Sweden": True,
                "adoption": False}
        yield rt, records


async def test_tags_keep_untagged_longterm_records_out_of_the_candidates(
    tmp_path: Path,
) -> None:
    async with faded(tmp_path) as (rt, records):
        tagged, untagged = records["quarterly numbers"], records["budget report"]
        main = rt.agent("Main")
        vector = await rt.embed_query(QUERY)

        async def longterm_candidates(tags: tuple[str, ...]) -> set[int]:
            found = (await main.retriever.gather(QUERY, vector, include_private=True,
                                                 tags=tags)).candidates
            return {c.record.record_id for c in found if c.tier == "longterm"}

        # Without tags the untagged record is the better match, and a candidate.
        plain = await main.recall(QUERY, k=10, read_through=False)
        ids = [h.record_id for h in plain]
        assert ids.index(untagged.record_id) < ids.index(tagged.record_id)
        assert {tagged.record_id, untagged.record_id} <= await longterm_candidates(())
        # With the tag (casefolded, any of them) only the tagged record is offered.
        for tags in (("work",), ("WORK", "nope")):
            assert await longterm_candidates(tags) == {tagged.record_id}
            hits = await main.recall(QUERY, k=10, read_through=False, tags=tags)
            assert untagged.record_id not in {h.record_id for h in hits}
            assert hits[0].record_id == tagged.record_id and hits[0].parts.tags > 0
        assert await longterm_candidates(("nothing-carries-this",)) == set()


async def test_working_records_still_compete_and_score_by_their_tags(tmp_path: Path) -> None:
    async with faded(tmp_path) as (rt, records):
        main = rt.agent("Main")
        plain = {h.record_id: h for h in await main.recall(QUERY, k=10, read_through=False)}
        tagged = {h.record_id: h
                  for h in await main.recall(QUERY, k=10, read_through=False, tags=["work"])}
        working = {r.record_id for r in rt.memories["Main"].working.records()}
        assert working <= set(plain) and working <= set(tagged)  # none narrowed away
        adoption = records["adoption"].record_id  # working, tagged "Work"
        assert plain[adoption].parts.tags == 0 and tagged[adoption].parts.tags > 0
        assert tagged[adoption].score > plain[adoption].score
        for rid in working - {adoption}:  # their own parts; context follows a neighbour's
            assert tagged[rid].score - tagged[rid].parts.context == \
                pytest.approx(plain[rid].score - plain[rid].parts.context)
            assert tagged[rid].parts.tags == plain[rid].parts.tags == 0


async def test_without_tags_recall_is_unchanged(tmp_path: Path) -> None:
    async with faded(tmp_path) as (rt, records):
        app = Solace(rt)
        main = rt.agent("Main")
        assert await app.recall(QUERY, k=10) == await app.recall(QUERY, k=10, tags=[])
        hits = await main.recall(QUERY, k=10)
        assert hits == await main.recall(QUERY, k=10, tags=())
        # Every long-term record is a candidate, tagged or not, and none scores by tags.
        vector = await rt.embed_query(QUERY)
        found = (await main.retriever.gather(QUERY, vector, include_private=True)).candidates
        assert {c.record.record_id for c in found if c.tier == "longterm"} == {
            r.record_id for r in rt.memories["Main"].longterm.records()}
        assert all(h.parts.tags == 0 for h in hits)


@pytest.mark.parametrize(("tags", "named"), [
    ("work", "tags must be a list of strings, got str: 'work'"),
    (["work", 7], "each tag must be a string, got int: 7"),
    (["  "], "not blank, got '  '"),
    (["x" * 129], "each tag must be 1..128 characters"),
    ([f"t{i}" for i in range(33)], "at most 32 tags may narrow a recall, got 33"),
])
async def test_bad_tags_are_refused_naming_the_problem(
    tmp_path: Path, tags: Any, named: str,
) -> None:
    async with open_runtime(tmp_path, config(), clock=ReplayClock(START)) as rt:
        with pytest.raises(AppError) as refused:
            await Solace(rt).recall(QUERY, tags=tags)
        assert named in str(refused.value)


async def test_tags_keep_the_events_of_untagged_longterm_episodes_out(tmp_path: Path) -> None:
    # Turns 30 s apart merge into one episode as they fade; its events are offered as
    # units (one event each), which tags must narrow like the records they belong to.
    bursts = [
        [("Caroline", "The quarterly numbers for the client are due on Friday.", ()),
         ("Melanie", "Then I will send the quarterly slides tonight.", ()),
         ("Caroline", "Good, the client meeting is at ten.", ())],
        [("Melanie", "My quarterly budget report for the book club is finished.", ("work",)),
         ("Caroline", "Did the club like the budget report?", ("work",))],
        [(s, text, ()) for s, text, _tags in LINES[2:]],
    ]
    async with open_runtime(tmp_path, config(), clock=ReplayClock(START)) as rt:
        when = START
        for burst in bursts:
            for speaker, text, tags in burst:
                await rt.agent("Main").observe(text, speaker=speaker, tags=tags, at=when)
                when += timedelta(seconds=30)
            when += timedelta(hours=5)
        await rt.settle()
        longterm = rt.memories["Main"].longterm
        main = rt.agent("Main")
        vector = await rt.embed_query(QUERY)
        plain = (await main.retriever.gather(QUERY, vector, include_private=True)).candidates
        assert any(c.unit and c.tier == "longterm" and not c.record.tags for c in plain)
        narrowed = (await main.retriever.gather(QUERY, vector, include_private=True,
                                                tags=["work"])).candidates
        offered = [c for c in narrowed if c.tier == "longterm"]
        assert offered
        assert all("work" in c.record.tags and longterm.get(c.record.record_id) is not None
                   for c in offered)


async def test_the_nearest_tagged_records_are_offered_even_past_the_overall_nearest(
    tmp_path: Path,
) -> None:
    async with faded(tmp_path) as (rt, records):
        retriever = rt.agent("Main").retriever
        retriever.candidates = 1  # the one nearest long-term record overall is untagged
        vector = await rt.embed_query("Sweden")
        assert [r.record_id for r, _ in rt.memories["Main"].longterm.search(vector, 1)] \
            == [records["Sweden"].record_id]
        found = (await retriever.gather("Sweden", vector, include_private=True,
                                        tags=["work"])).candidates
        assert [(c.record.record_id, c.lexical) for c in found if c.tier == "longterm"] \
            == [(records["quarterly numbers"].record_id, 0.0)]  # by embedding alone
