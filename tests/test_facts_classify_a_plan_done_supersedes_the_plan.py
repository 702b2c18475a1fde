"""A plan or an activity under way is superseded by the later statement that it is
done (solace.facts.progress): "plans to submit X" -> "submitted X"; never by another
thing done, nor by the plan restated."""

from __future__ import annotations

from pathlib import Path

import pytest

from solace.facts import WriteClass
from solace.facts.progress import fulfils
from tests.facts_fixtures import ManualClock, fact_memory

DAY = 86400.0


@pytest.mark.parametrize(("old", "new"), [
    ("Ana plans to submit her thesis to the journal", "Ana submitted her thesis to the journal"),
    ("Ana is going to visit Rome next year", "Ana visited Rome in May"),
    ("Ana is working on restoring a boat", "Ana finished restoring the boat"),
    ("Ana is applying to graduate programs", "Ana applied to three graduate programs"),
    ("Ana is moving to Berlin next month", "Ana moved to Berlin"),
    ("Ana started painting the fence", "Ana finished painting the fence"),
])
def test_a_plan_or_activity_is_fulfilled_by_its_verb_done(old: str, new: str) -> None:
    assert fulfils(new, old)


@pytest.mark.parametrize(("old", "new"), [
    ("Ana plans to visit Rome", "Ana visited Paris"),  # another thing
    ("Ana is painting the kitchen", "Ana painted the fence"),
    ("Ana plans to publish her novel", "Ana is hoping to publish her novel"),  # still a plan
    ("Ana is going to watch the movie", "Ana liked the movie"),  # another verb
    ("Ana lives in Porto", "Ana visited Porto"),  # no plan at all
])
def test_another_thing_done_or_the_plan_restated_fulfils_nothing(old: str, new: str) -> None:
    assert not fulfils(new, old)


async def test_the_plan_done_supersedes_the_plan(tmp_path: Path) -> None:
    clock = ManualClock()
    async with fact_memory(tmp_path, clock=clock) as fm:
        plan = await fm.remember("m", "Joao plans to submit his screenplay to film festivals")
        clock.t += 30 * DAY
        other = await fm.remember("m", "Joao plans to visit Lisbon")
        clock.t += 30 * DAY
        done = await fm.remember("m", "Joao submitted a screenplay to a film festival")
        assert done.write_class is WriteClass.UPDATE
        assert done.affected == (plan.fact.fact_id,)
        assert {f.text for f in fm.facts("m")} == {other.fact.text, done.fact.text}
