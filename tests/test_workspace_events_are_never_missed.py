"""The workspace sees every event once, however it is fed: pushed batches
(``on_events``), its own scans (``catch_up``), both mixed, or a batch twice."""

from __future__ import annotations

from pathlib import Path

from solace.conversation import events as cev
from tests.workspace_fixtures import SCOPE, ManualClock, workspace_home


async def test_a_pushed_later_event_never_hides_an_older_one_from_the_scan(
        tmp_path: Path) -> None:
    async with workspace_home(tmp_path, ManualClock()) as b:
        await b.facts.remember("user", "Caroline plays chess.")  # no hook: not pushed
        pushed = await b.store.append([cev.fact_set(SCOPE, "board", "wooden")], b.clock.now())
        await b.ws.on_events(pushed)
        await b.ws.catch_up()
        text = next((b.files / "memory").glob("*.md")).read_text()
        assert "- Caroline plays chess." in text and "- board: wooden" in text


async def test_a_batch_delivered_twice_is_logged_once(tmp_path: Path) -> None:
    async with workspace_home(tmp_path, ManualClock()) as b:
        pushed = await b.store.append([cev.note(SCOPE, "s", "t", "$set", "Buy milk")],
                                      b.clock.now())
        await b.ws.on_events(pushed)
        await b.ws.on_events(pushed)
        await b.ws.catch_up()
        text = next((b.files / "memory").glob("*.md")).read_text()
        assert text.count("- Buy milk") == 1
