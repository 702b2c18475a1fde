"""Issue 10 §Human edits stick: an edit to MEMORY.md, USER.md or a daily log is detected
at load (content hash), diffed and recorded as a ``workspace`` curation event; the next
render or synthesis keeps it, a removed bullet stays removed, and a clash is marked."""

from __future__ import annotations

import json
from pathlib import Path

from solace.workspace.state import WorkspaceState
from tests.workspace_fixtures import DAY, ManualClock, workspace_home

FACTS = ["Caroline's dog is called Biscuit.", "Caroline's sister Mel lives in Lisbon.",
         "Caroline plays the violin on Sundays.", "Caroline is learning Portuguese."]


def _replace_line(path: Path, old: str, new: str | None) -> None:
    lines = path.read_text().splitlines()
    assert old in lines, (old, lines)
    out = [x for x in lines if x != old] if new is None else [new if x == old else x
                                                              for x in lines]
    path.write_text("\n".join(out) + "\n")


async def test_a_human_edit_to_memory_md_survives_the_next_synthesis(tmp_path: Path) -> None:
    clock = ManualClock()
    async with workspace_home(tmp_path, clock) as b:
        for fact in FACTS:
            await b.remember(fact)
            clock.t += DAY
        await b.ws.synthesize()
        memory = b.files / "MEMORY.md"
        _replace_line(memory, "- Caroline's dog is called Biscuit.",
                      "- Caroline's dog Biscuit is a beagle.")
        memory.write_text(memory.read_text() + "\n## Travel\n- Caroline wants to see Kyoto.\n")
        await b.remember("Caroline drives a blue Volvo.")
        await b.ws.synthesize()
        text = memory.read_text()
        assert "- Caroline's dog Biscuit is a beagle." in text
        assert "Caroline's dog is called Biscuit." not in text  # not synthesised back
        assert "## Travel\n- Caroline wants to see Kyoto." in text
        assert "- Caroline drives a blue Volvo." in text  # synthesis went on around it
        (edit,) = await b.substrate.scan(kind="workspace")
        assert edit.attrs["op"] == "edit" and edit.attrs["file"] == "MEMORY.md"
        body = json.loads(edit.content)
        assert body["added"] == [["Travel", "Caroline wants to see Kyoto."]]
        assert [c[1:] for c in body["changed"]] == [["Facts",
                                                     "Caroline's dog Biscuit is a beagle."]]
    async with workspace_home(tmp_path, clock) as b:  # a restart folds the event back in
        await b.ws.synthesize()
        assert "- Caroline's dog Biscuit is a beagle." in (b.files / "MEMORY.md").read_text()


async def test_a_removed_bullet_stays_removed(tmp_path: Path) -> None:
    clock = ManualClock()
    async with workspace_home(tmp_path, clock) as b:
        for fact in FACTS:
            await b.remember(fact)
        await b.ws.synthesize()
        memory = b.files / "MEMORY.md"
        _replace_line(memory, "- Caroline plays the violin on Sundays.", None)
        day = next((b.files / "memory").glob("*.md"))
        _replace_line(day, "- Caroline is learning Portuguese.", None)
        await b.remember("Caroline drives a blue Volvo.")  # re-renders the same day
        await b.ws.synthesize()
        await b.ws.synthesize()
        assert "violin" not in memory.read_text()
        assert "violin" in day.read_text()  # removed from MEMORY.md only
        assert "Portuguese" not in day.read_text() and "Portuguese" not in memory.read_text()
        assert "- Caroline drives a blue Volvo." in day.read_text()
        dump = "".join(e.content for e in await b.substrate.scan(kind="workspace"))
        assert "violin" not in dump and "Portuguese" not in dump  # removals by hash only


async def test_a_clash_with_a_human_edit_is_marked_for_the_human(tmp_path: Path) -> None:
    clock = ManualClock()
    async with workspace_home(tmp_path, clock) as b:
        for fact in FACTS:
            await b.remember(fact)
        await b.ws.synthesize()
        mine = "Caroline's sister Mel lives in Lisbon, near Alfama."
        _replace_line(b.files / "MEMORY.md", "- Caroline's sister Mel lives in Lisbon.",
                      f"- {mine}")
        await b.ws.reload()
        clock.t += DAY
        await b.remember("Caroline's sister Mel lives in Porto.")
        await b.ws.synthesize()
        text = (b.files / "MEMORY.md").read_text()
        lines = text.splitlines()
        at = lines.index(f"- {mine}")
        assert lines[at + 1].strip().startswith("<!-- CLASH: a newer memory says "
                                                "\"Caroline's sister Mel lives in Porto.\"")
        assert "- Caroline's sister Mel lives in Porto." not in text  # the human decides


async def test_an_edit_to_user_md_is_recorded_as_curation_and_loaded(tmp_path: Path) -> None:
    clock = ManualClock()
    async with workspace_home(tmp_path, clock) as b:
        user = b.files / "USER.md"
        user.write_text(user.read_text() + "\n- Prefers bullet lists over tables.\n")
        (edit,) = await b.ws.reload()
        assert edit.file == "USER.md" and [t for _, t in edit.added] == [
            "Prefers bullet lists over tables."]
        assert await b.ws.reload() == []  # recorded once
        ctx = await b.ws.session_context(session_type="shared")
        assert "Prefers bullet lists over tables." in ctx.stable
        assert user.read_text().endswith("- Prefers bullet lists over tables.\n")  # untouched


async def test_a_daily_log_edit_is_kept_by_the_next_render(tmp_path: Path) -> None:
    clock = ManualClock()
    async with workspace_home(tmp_path, clock) as b:
        await b.remember(FACTS[0])
        day = next((b.files / "memory").glob("*.md"))
        _replace_line(day, f"- {FACTS[0]}", "- Caroline's dog is called Biscuit (a beagle).")
        day.write_text(day.read_text() + "\n## 2026-09-21 09:00 - Infrastructure\n"
                                         "- Moved the backups to the NAS.\n")
        await b.remember(FACTS[1])  # no explicit reload: the write path detects the edit
        text = day.read_text()
        assert "- Caroline's dog is called Biscuit (a beagle)." in text
        assert f"- {FACTS[0]}" not in text and f"- {FACTS[1]}" in text
        assert text.index("## 2026-09-21 09:00 - Infrastructure") < text.index(FACTS[1])
        assert b.ws.counters["edits_recorded"] == 1


async def test_a_crash_between_state_and_file_is_not_taken_for_an_edit(tmp_path: Path) -> None:
    clock = ManualClock()
    async with workspace_home(tmp_path, clock) as b:
        await b.remember(FACTS[0])
        day = next((b.files / "memory").glob("*.md"))
        before = day.read_text()
        await b.remember(FACTS[1])
        state_path = b.ws._state_path
    state = WorkspaceState.load(state_path, b.substrate.key_ring)
    assert state is not None and len(state.versions(f"memory/{day.name}")) == 2
    day.write_text(before)  # as if the process died before the rename
    async with workspace_home(tmp_path, clock) as b:
        assert b.ws.counters["edits_recorded"] == 0
        assert await b.substrate.scan(kind="workspace") == []
        assert FACTS[1] in day.read_text()  # re-rendered at open
        day.write_text(before)  # now a human's revert: seen, and recorded
        (edit,) = await b.ws.reload()
        assert len(edit.removed) == 1
