"""Issue 9 meets issue 10: a fact deleted from fact memory (or its memory id forgotten)
is gone from every workspace file (daily log, roll-ups, MEMORY.md) after the render its
deletion triggers, and no workspace event ever kept its text."""

from __future__ import annotations

from pathlib import Path

from tests.facts_fixtures import decrypted_dump
from tests.workspace_fixtures import DAY, Bench, ManualClock, every_file, workspace_home

SECRET = "Zoe's passport number is XK4471923."
KEPT = ["Zoe prefers window seats.", "Zoe collects vintage maps.", "Zoe speaks Finnish."]


def _found(root: Path, needle: str) -> list[str]:
    return [name for name, data in every_file(root).items() if needle.encode() in data]


async def _populated(b: Bench, clock: ManualClock) -> str:
    fact_id = await b.remember(SECRET, memory_id="zoe")
    for text in KEPT:
        clock.t += DAY / 4
        await b.remember(text, memory_id="zoe")
    await b.ws.synthesize()
    await b.ws.rollup()
    return fact_id


async def test_a_deleted_fact_is_gone_from_every_workspace_file(tmp_path: Path) -> None:
    clock = ManualClock()
    async with workspace_home(tmp_path, clock) as b:
        fact_id = await _populated(b, clock)
        where = {n for n in _found(tmp_path, "XK4471923") if n.endswith(".md")}
        assert {"workspace/MEMORY.md", "workspace/memory/weekly/2026-W39.md",
                "workspace/memory/monthly/2026-09.md"} <= where
        assert any(n.startswith("workspace/memory/2026-") for n in where)
        await b.facts.delete("zoe", fact_id)
        await b.ws.catch_up()
        assert _found(tmp_path, "XK4471923") == []
        assert "Zoe speaks Finnish." in (b.files / "MEMORY.md").read_text()  # the rest stays
    assert "XK4471923" not in decrypted_dump(tmp_path)


async def test_a_forgotten_memory_id_leaves_no_workspace_file_holding_it(tmp_path: Path) -> None:
    clock = ManualClock()
    async with workspace_home(tmp_path, clock) as b:
        await _populated(b, clock)
        await b.remember("Yann likes jazz.", memory_id="yann")
        await b.facts.forget("zoe")
        await b.ws.catch_up()
        for text in [SECRET, *KEPT]:
            assert _found(tmp_path, text.split()[-1].rstrip(".")) == [], text
        assert "- Yann likes jazz." in (b.files / "MEMORY.md").read_text()  # re-synthesised


async def test_a_human_removal_of_a_fact_bullet_keeps_no_text_for_a_later_delete(
        tmp_path: Path) -> None:
    clock = ManualClock()
    async with workspace_home(tmp_path, clock) as b:
        fact_id = await _populated(b, clock)
        memory = b.files / "MEMORY.md"
        memory.write_text(memory.read_text().replace(f"- {SECRET}\n", ""))
        assert len(await b.ws.reload()) == 1
        await b.facts.delete("zoe", fact_id)
        await b.ws.catch_up()
        assert _found(tmp_path, "XK4471923") == []
    async with workspace_home(tmp_path, clock) as b:  # a restart renders nothing back
        await b.ws.synthesize()
        assert _found(tmp_path, "XK4471923") == []
    assert "XK4471923" not in decrypted_dump(tmp_path)
