"""recall: both tiers queried in parallel and merged on one composite score."""

from __future__ import annotations

import threading
from datetime import timedelta
from pathlib import Path

import pytest
from runtime_support import START, fill

from solace import ReplayClock, open_runtime
from solace.config import AgentConfig, Config, MemoryConfig, ModelsConfig, SubstrateConfig
from solace.memory import candidates


def config(budget: int = 40, merge: bool = False) -> Config:
    small = AgentConfig(budget_tokens=budget)
    return Config(
        models=ModelsConfig(embedder="hashing", llm_backend="none"),
        substrate=SubstrateConfig(fsync="never"),
        # The hashing embedder knows no topics: let every close-in-time turn merge.
        memory=MemoryConfig(episode_min_similarity=-1.0 if merge else 0.3),
        agents={"Main": small, "Supervisor": small},
    )


async def test_recall_merges_both_tiers_best_first_on_one_score(tmp_path: Path) -> None:
    clock = ReplayClock(START)
    async with open_runtime(tmp_path, config(), clock=clock) as rt:
        await fill(rt)
        memory = rt.memories["Main"]
        assert len(memory.working) and len(memory.longterm)  # both tiers hold records
        hits = await rt.agent("Main").recall("Caroline Sweden pottery violin", k=20,
                                             read_through=False)
        assert {h.tier for h in hits} == {"working", "longterm"}
        scores = [h.score for h in hits]
        assert scores == sorted(scores, reverse=True)
        for hit in hits:
            assert hit.score == pytest.approx(hit.parts.total)
            assert hit.agent == "Main" and hit.owner is None
        covered = [e for h in hits for e in h.entry_ids]
        assert len(covered) == len(set(covered))  # no event injected twice


async def test_lexical_match_finds_the_record_with_the_name(tmp_path: Path) -> None:
    clock = ReplayClock(START)
    async with open_runtime(tmp_path, config(), clock=clock) as rt:
        ids = await fill(rt)
        (best, *_rest) = await rt.agent("Main").recall("Who is Jolene?", k=5, read_through=False)
        assert ids[2] in best.entry_ids
        assert best.parts.lexical > 0


async def test_a_small_longterm_search_runs_on_the_loop_a_large_one_in_a_worker_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A thread hop costs more than searching a few thousand vectors; past
    ``INLINE_SEARCH_MAX`` the search leaves the event loop, and peers' run at once:
    each waits at a barrier that only opens when both are in flight."""
    clock = ReplayClock(START)
    async with open_runtime(tmp_path, config(), clock=clock) as rt:
        await fill(rt)
        threads: list[str] = []
        for name in ("Main", "Supervisor"):
            tier = rt.memories[name].longterm
            original = tier.search

            def noting_search(vector, k, _original=original):  # type: ignore[no-untyped-def]
                threads.append(threading.current_thread().name)
                return _original(vector, k)

            tier.search = noting_search  # type: ignore[method-assign]
        assert await rt.agent("Main").recall("camping at the lake", k=5, read_through=True)
        assert threads and set(threads) == {threading.main_thread().name}

        monkeypatch.setattr(candidates, "INLINE_SEARCH_MAX", 0)
        barrier = threading.Barrier(2, timeout=10)
        waited: list[str] = []
        for name in ("Main", "Supervisor"):
            tier = rt.memories[name].longterm
            assert len(tier)
            original = tier.search

            def waiting_search(vector, k, _original=original):  # type: ignore[no-untyped-def]
                waited.append(threading.current_thread().name)
                barrier.wait()  # BrokenBarrierError if the other search never comes
                return _original(vector, k)

            tier.search = waiting_search  # type: ignore[method-assign]
        # Asked by Mood, Main and Supervisor are both peers (queried at once).
        assert await rt.agent("Mood").recall("camping at the lake", k=5, read_through=True)
        assert len(waited) == 2 and threading.main_thread().name not in waited


async def test_a_peer_builds_no_candidate_for_events_the_asker_offers(tmp_path: Path) -> None:
    """Read-through drops a peer's candidate standing only for the asker's events; the
    peer is told them and leaves those out, and the rest are the ones it would offer."""
    clock = ReplayClock(START)
    async with open_runtime(tmp_path, config(), clock=clock) as rt:
        await fill(rt)
        query = "Caroline Sweden pottery violin"
        vector = await rt.embed_query(query)
        peer = rt.agent("Supervisor").retriever
        every = (await peer.gather(query, vector, include_private=False)).candidates
        assert len(every) > 2
        known = frozenset(every[0].entry_ids)
        told = await peer.gather(query, vector, include_private=False, known=known)
        assert told.candidates == [c for c in every if not known.issuperset(c.entry_ids)]
        everything = frozenset(e for c in every for e in c.entry_ids)
        nothing = await peer.gather(query, vector, include_private=False, known=everything)
        assert nothing.candidates == []


async def test_a_rung3_hit_is_injected_rehydrated_and_costs_its_tokens(tmp_path: Path) -> None:
    clock = ReplayClock(START)
    async with open_runtime(tmp_path, config(), clock=clock) as rt:
        ids = await fill(rt)
        clock.advance(timedelta(days=10).total_seconds())  # past longterm_summary_hours
        await rt.settle()
        memory = rt.memories["Main"]
        rung3 = [r for r in memory.longterm.records() if r.rung == 3]
        assert rung3
        target = next(r for r in rung3 if ids[0] in r.entry_ids)
        hits = await rt.agent("Main").recall("Sweden four years ago", k=10, read_through=False)
        hit = next(h for h in hits if h.record_id == target.record_id)
        assert hit.rung == 3 and hit.tier == "longterm"
        assert "Sweden" in hit.text and hit.text != target.text  # rehydrated, not the tags
        assert hit.tokens == rt.tokenizer.count(hit.text)


async def test_a_faded_episode_offers_its_events_as_units_with_dates_resolved(
    tmp_path: Path,
) -> None:
    clock = ReplayClock(START)
    async with open_runtime(tmp_path, config(merge=True), clock=clock) as rt:
        ids = await fill(rt)
        memory = rt.memories["Main"]
        episode = next(r for r in memory.longterm.records() if ids[1] in r.entry_ids)
        assert len(episode.entry_ids) > 1  # merged while fading
        hits = await rt.agent("Main").recall("When did Melanie go camping at the lake?", k=10,
                                             read_through=False)
        unit = next(h for h in hits if h.entry_ids == (ids[1],))
        assert unit.record_id == episode.record_id and unit.tier == "longterm"
        assert unit.text == (
            "Melanie: My kids and I went camping at the lake the weekend before 8 May 2023."
        )
        assert unit.tokens == rt.tokenizer.count(unit.text)
