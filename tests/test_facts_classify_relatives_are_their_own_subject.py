"""A relative is a subject of their own: "Ana's sister lives in Lima" never replaces
where Ana lives, and facts about one relative replace each other only as any person's
do (the same single-valued attribute, or a replaced value), never for being about her."""

from __future__ import annotations

from pathlib import Path

import pytest

from solace.facts import WriteClass
from solace.facts.model import Exchange
from solace.facts.subjects import subject
from tests.facts_fixtures import ManualClock, fact_memory

DAY = 86400.0


@pytest.mark.parametrize(("text", "who"), [
    ("Rosa lives in Porto", "rosa"),
    ("Rosa's sister lives in Lima", "rosa's sister"),
    ("Rosa's younger brother works at Bosch", "rosa's brother"),
    ("Rosa's mom retired in 2025", "rosa's mother"),
    ("The user's sister Maria lives in Lisbon", "user's sister"),
    ("Rosa's home is in Oslo", "rosa"),
    ("Rosa's partner is Sam", "rosa"),  # naming the partner: who Rosa's partner is
    ("Rosa's wife is called Ines", "rosa"),
    ("Rosa's wife works at Bosch", "rosa's partner"),
])
def test_a_possessed_relative_is_the_subject(text: str, who: str) -> None:
    assert subject(text) == who


async def test_a_relatives_residence_never_supersedes_the_speakers(tmp_path: Path) -> None:
    clock = ManualClock()
    async with fact_memory(tmp_path, clock=clock) as fm:
        own = await fm.remember("m", "Rosa lives in Porto")
        clock.t += DAY
        sister = await fm.remember("m", "Rosa's sister lives in Lima")
        clock.t += DAY
        await fm.remember("m", "Rosa's brother works at Bosch")
        clock.t += DAY
        job = await fm.remember("m", "Rosa works at Zara")
        assert sister.write_class is WriteClass.ADD and job.write_class is WriteClass.ADD
        clock.t += DAY
        moved = await fm.remember("m", "Rosa's sister has moved to Quito")
        assert moved.affected == (sister.fact.fact_id,)
        live = {f.text for f in fm.facts("m")}
        assert own.fact.text in live and "Rosa's brother works at Bosch" in live


async def test_facts_about_one_relative_are_not_one_slot(tmp_path: Path) -> None:
    clock = ManualClock()
    async with fact_memory(tmp_path, clock=clock) as fm:
        async def said(text: str) -> list[WriteClass]:
            clock.t += DAY
            ex = Exchange(user=text, ts=clock.t, speaker="Rosa")
            return [r.write_class for r in await fm.extract_turn("m", ex)]

        assert await said("My sister lives in Lima.") == [WriteClass.ADD]
        assert await said("My sister Maya is a nurse.") == [WriteClass.ADD]
        assert await said("My sister has two kids.") == [WriteClass.ADD]
        assert await said("My sister has three kids now.") == [WriteClass.UPDATE]
        assert await said("My sister moved to Quito.") == [WriteClass.UPDATE]
        live = {f.text for f in fm.facts("m")}
        assert live == {"Rosa's sister Maya is a nurse", "Rosa's sister has three kids now",
                        "Rosa's sister moved to Quito"}


async def test_a_new_partner_still_replaces_the_old_one(tmp_path: Path) -> None:
    clock = ManualClock()
    async with fact_memory(tmp_path, clock=clock) as fm:
        for text in ("I'm dating Kai.", "I'm with Noor now."):
            clock.t += DAY
            await fm.extract_turn("m", Exchange(user=text, ts=clock.t, speaker="Rosa"))
        assert [f.text for f in fm.facts("m")] == ["Rosa is with Noor now"]
