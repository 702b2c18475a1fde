"""Every write is read first, then classified ADD / UPDATE / NOOP / CONFLICT (issue 9 §4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from solace.config.schema import AgentConfig, Config, StoreConfig
from solace.facts import (
    Candidate,
    FactStatus,
    InvalidFactError,
    InvalidMemoryIdError,
    UnknownStoreError,
    WriteClass,
)
from tests.facts_fixtures import ManualClock, config_with, fact_memory

HOUR = 3600.0


async def test_a_new_fact_is_added(tmp_path: Path) -> None:
    async with fact_memory(tmp_path) as fm:
        r = await fm.remember("cust-1", "Alice prefers invoices summarised in French.")
        assert r.write_class is WriteClass.ADD
        assert [f.text for f in fm.facts("cust-1")] == [
            "Alice prefers invoices summarised in French."]


async def test_a_restatement_is_a_noop_that_raises_mentions_and_last_confirmed(
        tmp_path: Path) -> None:
    clock = ManualClock()
    async with fact_memory(tmp_path, clock=clock) as fm:
        first = await fm.remember("cust-1", "Alice lives in Paris.")
        clock.t += 5 * HOUR
        again = await fm.remember("cust-1", "alice lives in paris")
        assert again.write_class is WriteClass.NOOP
        assert again.fact.fact_id == first.fact.fact_id
        assert again.fact.mentions == 2
        assert again.fact.last_confirmed == clock.t
        assert len(fm.facts("cust-1", include_history=True)) == 1


async def test_a_newer_value_for_the_same_subject_updates_and_keeps_history(
        tmp_path: Path) -> None:
    clock = ManualClock()
    async with fact_memory(tmp_path, clock=clock) as fm:
        old = await fm.remember("cust-1", "Alice lives in Paris.")
        clock.t += HOUR
        new = await fm.remember("cust-1", "Alice lives in Berlin.")
        assert new.write_class is WriteClass.UPDATE
        assert old.fact.fact_id in new.reason
        history = {f.fact_id: f for f in fm.facts("cust-1", include_history=True)}
        assert history[old.fact.fact_id].status is FactStatus.SUPERSEDED
        assert history[old.fact.fact_id].superseded_by == new.fact.fact_id
        block = await fm.recall("Where does Alice live?", "cust-1")
        assert "Berlin" in block.text and "Paris" not in block.text


async def test_a_contradiction_that_cannot_be_ordered_is_a_flagged_conflict(
        tmp_path: Path) -> None:
    clock = ManualClock()
    async with fact_memory(tmp_path, clock=clock) as fm:
        a = await fm.remember("cust-1", "The contract renews in March 2027.")
        b = await fm.remember("cust-1", "The contract renews in June 2027.")  # same instant
        assert b.write_class is WriteClass.CONFLICT
        facts = {f.fact_id: f for f in fm.facts("cust-1")}
        assert facts[a.fact.fact_id].status is FactStatus.CONFLICTING
        assert facts[b.fact.fact_id].conflicts_with == (a.fact.fact_id,)
        block = await fm.recall("When does the contract renew?", "cust-1")
        assert "March 2027" in block.text and "June 2027" in block.text
        assert "CONFLICT" in block.text


async def test_an_older_value_arriving_late_conflicts_instead_of_overwriting(
        tmp_path: Path) -> None:
    clock = ManualClock()
    async with fact_memory(tmp_path, clock=clock) as fm:
        await fm.remember("cust-1", "Bob works at Initech.")
        r = await fm.remember("cust-1", "Bob works at Globex.", as_of=clock.t - 30 * 24 * HOUR)
        assert r.write_class is WriteClass.CONFLICT


async def test_the_same_slot_from_the_extractor_is_the_same_subject(tmp_path: Path) -> None:
    clock = ManualClock()
    async with fact_memory(tmp_path, clock=clock) as fm:
        await fm.write("u", [Candidate("The user drinks tea every morning.", 0.5, "drink")])
        clock.t += HOUR
        (r,) = await fm.write("u", [Candidate("The user switched to coffee.", 0.5, "drink")])
        assert r.write_class is WriteClass.UPDATE


async def test_dedup_threshold_decides_what_counts_as_a_restatement(tmp_path: Path) -> None:
    text_a, text_b = "Carol likes hiking in the Alps.", "Carol likes hiking in the Alps a lot."
    async with fact_memory(tmp_path / "strict", config_with(deduplication_threshold=1.0)) as fm:
        await fm.remember("c", text_a)
        assert (await fm.remember("c", text_b)).write_class is WriteClass.ADD
    async with fact_memory(tmp_path / "loose", config_with(deduplication_threshold=0.5)) as fm:
        await fm.remember("c", text_a)
        assert (await fm.remember("c", text_b)).write_class is WriteClass.NOOP


async def test_a_restatement_with_a_new_number_is_not_a_noop(tmp_path: Path) -> None:
    async with fact_memory(tmp_path, config_with(deduplication_threshold=0.5)) as fm:
        await fm.remember("c", "Dan has two cats.")
        r = await fm.remember("c", "Dan has 3 cats.")
        assert r.write_class is not WriteClass.NOOP


@pytest.mark.parametrize("bad", ["", "has space", "a/b", "x" * 129, "é", None, 7])
async def test_a_memory_id_breaking_the_rule_is_refused_naming_it(tmp_path: Path,
                                                                  bad: object) -> None:
    async with fact_memory(tmp_path) as fm:
        with pytest.raises(InvalidMemoryIdError, match="letters, digits") as err:
            await fm.remember(bad, "Alice lives in Paris.")  # type: ignore[arg-type]
        assert repr(bad) in str(err.value)
        assert fm.memory_ids() == []


async def test_an_unknown_store_is_a_clear_error(tmp_path: Path) -> None:
    async with fact_memory(tmp_path) as fm:
        with pytest.raises(UnknownStoreError, match="'tickets'"):
            await fm.remember("c", "Alice lives in Paris.", store="tickets")


async def test_the_agents_configured_store_applies_unless_the_request_names_one(
        tmp_path: Path) -> None:
    base = Config()
    agents = dict(base.agents)
    agents["Main"] = AgentConfig(memory_store="assist")
    config = Config(agents=agents, stores={"default": StoreConfig(),
                                           "assist": StoreConfig(top_k=1)})
    async with fact_memory(tmp_path, config) as fm:
        assert fm.store_name(None, "Main") == "assist"
        assert fm.store_name("default", "Main") == "default"
        assert fm.store_name(None, "Mood") == "default"
        r = await fm.remember("c", "Alice lives in Paris.", agent="Main")
        assert r.fact.store == "assist"


@pytest.mark.parametrize("text,importance", [("  ", 0.5), ("ok fact", 1.5), ("ok", True)])
async def test_a_bad_fact_is_refused_and_nothing_is_written(tmp_path: Path, text: str,
                                                            importance: object) -> None:
    async with fact_memory(tmp_path) as fm:
        with pytest.raises(InvalidFactError):
            await fm.remember("c", text, importance=importance)  # type: ignore[arg-type]
        assert fm.memory_ids() == []


async def test_a_reopened_memory_equals_the_live_one(tmp_path: Path) -> None:
    clock = ManualClock()
    async with fact_memory(tmp_path, clock=clock) as fm:
        await fm.remember("c", "Alice lives in Paris.")
        await fm.remember("c", "Alice lives in Paris.")
        clock.t += HOUR
        await fm.remember("c", "Alice lives in Berlin.")
        await fm.remember("c", "The contract renews in March 2027.")
        await fm.remember("c", "The contract renews in June 2027.")
        live = fm.export("c")
    async with fact_memory(tmp_path, clock=clock) as fm:
        assert fm.export("c") == live


async def test_a_fact_about_another_person_never_supersedes(tmp_path: Path) -> None:
    clock = ManualClock()
    async with fact_memory(tmp_path, clock=clock) as fm:
        await fm.remember("m", "Chloe's favourite food is tacos.")
        clock.t += HOUR
        r = await fm.remember("m", "Dmitri's favourite food is tacos.")
        assert r.write_class is WriteClass.ADD
        assert len(fm.facts("m")) == 2


async def test_an_added_detail_of_another_attribute_is_not_a_new_value(tmp_path: Path) -> None:
    clock = ManualClock()
    async with fact_memory(tmp_path, clock=clock) as fm:
        await fm.remember("m", "Bruno is an electrician.")
        clock.t += HOUR
        assert (await fm.remember("m", "Bruno is based in Berlin.")).write_class is WriteClass.ADD


@pytest.mark.parametrize("old,new", [
    ("Lucia works as an accountant.", "Lucia works as an electrician."),
    ("Omar's home is in Oslo.", "Omar has moved to Lisbon."),
    ("Ken's favourite drink is tea.", "Ken's favourite drink is matcha now."),
])
async def test_a_single_valued_attribute_restated_with_another_value_updates(
        tmp_path: Path, old: str, new: str) -> None:
    clock = ManualClock()
    async with fact_memory(tmp_path, clock=clock) as fm:
        await fm.remember("m", old)
        clock.t += HOUR
        assert (await fm.remember("m", new)).write_class is WriteClass.UPDATE
        assert [f.text for f in fm.facts("m")] == [new]


async def test_likes_are_not_single_valued(tmp_path: Path) -> None:
    clock = ManualClock()
    async with fact_memory(tmp_path, clock=clock) as fm:
        await fm.remember("m", "Ken likes tea.")
        clock.t += HOUR
        assert (await fm.remember("m", "Ken likes coffee.")).write_class is WriteClass.ADD
