"""Issue 10: a simulated fortnight on the autojump clock leaves 14 daily logs with their
headers, yesterday and today in the session context, weekly and monthly roll-ups,
MEMORY.md synthesised, and NOW.md rewritten each cycle within 300 tokens."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import trio
import trio.testing

from solace.clock import TrioClock
from solace.models import WordPieceTokenizer
from tests.workspace_fixtures import DAY, T0, Bench, topic_events, workspace_home

FACTS = [
    "Caroline prefers bullet lists over tables.", "Caroline works as a counsellor.",
    "Caroline's dog is called Biscuit.", "Caroline is allergic to peanuts.",
    "Caroline plays the violin on Sundays.", "Caroline's sister Mel lives in Lisbon.",
    "Caroline is learning Portuguese.", "Caroline drives a blue Volvo.",
    "Caroline volunteers at the food bank.", "Caroline's birthday is on 14 March.",
    "Caroline reads science fiction novels.", "Caroline runs every morning.",
    "Caroline keeps her notes in Obsidian.", "Caroline's favourite tea is jasmine.",
]
THINGS = ["garden", "concert", "library", "bakery", "harbour", "museum", "cinema",
          "market", "theatre", "gallery", "stadium", "aquarium", "observatory", "zoo"]
START = datetime.fromtimestamp(T0, UTC).date()


async def _fortnight(b: Bench) -> list[str]:
    nows = []
    for n in range(14):
        await b.remember(FACTS[n])
        await b.conversation(*topic_events(
            n, f"{THINGS[n].title()} plans",
            f"Caroline and Main planned a visit to the {THINGS[n]}. "
            f"They chose the {THINGS[n]} near the station.",
            note=f"Book tickets for the {THINGS[n]}",
            decision=(f"{THINGS[n]}_visit", "booked")))
        await b.ws.heartbeat()
        nows.append((b.files / "NOW.md").read_text())
        await trio.sleep(DAY)
    return nows


async def test_a_fortnight_writes_fourteen_daily_logs_with_their_headers(
        tmp_path: Path, autojump_clock: trio.testing.MockClock) -> None:
    async with workspace_home(tmp_path, TrioClock(T0)) as b:
        await _fortnight(b)
        days = sorted(p.name for p in (b.files / "memory").glob("*.md"))
        assert days == [f"{START + timedelta(days=n)}.md" for n in range(14)]
        for n, name in enumerate(days):
            text = (b.files / "memory" / name).read_text()
            day = name[:-3]
            headers = re.findall(r"^## (\S+) (\d\d:\d\d) - (.+)$", text, re.M)
            assert headers and all(h[0] == day for h in headers), text
            subjects = {h[2] for h in headers}
            assert {"Facts learned", f"Topic: {THINGS[n].title()} plans",
                    f"Notes: {THINGS[n].title()} plans",
                    f"Decision: {THINGS[n].title()} plans",
                    f"Decision: {THINGS[n]}_visit"} <= subjects, subjects
            assert f"- {FACTS[n]}" in text
            assert "RAW TRANSCRIPT" not in text  # never a transcript


async def test_yesterday_and_today_load_at_session_start(
        tmp_path: Path, autojump_clock: trio.testing.MockClock) -> None:
    async with workspace_home(tmp_path, TrioClock(T0)) as b:
        await _fortnight(b)
        ctx = await b.ws.session_context(T0 + 13 * DAY + 3600, "main")
        assert ctx.files[:3] == ("SOUL.md", "USER.md", "AGENTS.md")
        assert ctx.files[-2:] == (f"memory/{START + timedelta(days=12)}.md",
                                  f"memory/{START + timedelta(days=13)}.md")
        assert FACTS[12] in ctx.semi_stable and FACTS[13] in ctx.semi_stable
        assert FACTS[11] not in ctx.semi_stable  # the day before yesterday is not loaded
        assert "You are Solace" in ctx.stable and "<!--" not in ctx.stable
        assert ctx.tokens == WordPieceTokenizer().count(ctx.stable) + \
            WordPieceTokenizer().count(ctx.semi_stable)


async def test_the_heartbeat_writes_weekly_and_monthly_rollups_and_memory(
        tmp_path: Path, autojump_clock: trio.testing.MockClock) -> None:
    async with workspace_home(tmp_path, TrioClock(T0)) as b:
        await _fortnight(b)
        weekly = sorted(p.name for p in (b.files / "memory" / "weekly").glob("*.md"))
        assert weekly == ["2026-W39.md", "2026-W40.md"]
        for name in weekly:
            text = (b.files / "memory" / "weekly" / name).read_text()
            assert len(re.findall(r"^## \d{4}-\d\d-\d\d \(\w+day\)$", text, re.M)) == 7, text
        monthly = sorted(p.name for p in (b.files / "memory" / "monthly").glob("*.md"))
        assert monthly == ["2026-09.md", "2026-10.md"]  # each week in its Thursday's month
        assert "## Week 2026-W39" in (b.files / "memory/monthly/2026-09.md").read_text()
        memory = (b.files / "MEMORY.md").read_text()
        for section in ("## Decisions", "## Facts", "## Topics", "## Notes"):
            assert section in memory
        for fact in FACTS:
            assert f"- {fact}" in memory
        for thing in THINGS:  # decisions are kept, one per subject
            assert f'- Topic "{thing.title()} plans" promoted' in memory
            assert f"- {thing}_visit: booked" in memory
        bullets = re.findall(r"^- (.+)$", memory, re.M)
        assert len(bullets) == len(set(bullets))  # deduplicated
        assert b.ws.counters["syntheses"] == 14  # every 24 h on the heartbeat


async def test_now_md_is_rewritten_each_cycle_within_300_tokens(
        tmp_path: Path, autojump_clock: trio.testing.MockClock) -> None:
    async with workspace_home(tmp_path, TrioClock(T0)) as b:
        nows = await _fortnight(b)
        tok = WordPieceTokenizer()
        assert len(set(nows)) == 14
        for n, text in enumerate(nows):
            assert tok.count(text) <= 300
            assert f"Updated {START + timedelta(days=n)}" in text
            assert f"- {THINGS[n].title()} plans" in text  # the active topic
            assert f"Book tickets for the {THINGS[n]}" in text  # an open note
