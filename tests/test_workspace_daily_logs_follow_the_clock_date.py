"""Issue 10 §Daily logs: a log is dated by the clock in the configured time zone (UTC
unless configured), created on the first write of a day (no file for a day with
nothing to log), and a replayed day is logged at its events' dates."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from pathlib import Path

import pytest

from solace.config import ConfigError, load_config
from solace.config.schema import Config, WorkspaceConfig
from solace.conversation import events as cev
from tests.workspace_fixtures import SCOPE, ManualClock, workspace_home

LATE = datetime(2026, 9, 21, 23, 30, tzinfo=UTC).timestamp()


async def test_a_late_utc_event_is_logged_on_the_local_date(tmp_path: Path) -> None:
    config = dataclasses.replace(Config(), workspace=WorkspaceConfig(timezone="Europe/Paris"))
    async with workspace_home(tmp_path, ManualClock(LATE), config) as b:
        await b.remember("Caroline booked a table at Chez Janou.")
        assert [p.name for p in (b.files / "memory").glob("*.md")] == ["2026-09-22.md"]
        text = (b.files / "memory" / "2026-09-22.md").read_text()
        assert "## 2026-09-22 01:30 - Facts learned" in text


async def test_utc_by_default(tmp_path: Path) -> None:
    async with workspace_home(tmp_path, ManualClock(LATE)) as b:
        await b.remember("Caroline booked a table at Chez Janou.")
        assert [p.name for p in (b.files / "memory").glob("*.md")] == ["2026-09-21.md"]


async def test_a_day_of_chat_alone_leaves_no_daily_log(tmp_path: Path) -> None:
    async with workspace_home(tmp_path, ManualClock(LATE)) as b:
        await b.conversation(cev.open_topic(SCOPE, "s1", "t1", origin="new", title="Hi"),
                             cev.activate_topic(SCOPE, "s1", "t1"),
                             cev.message(SCOPE, "s1", "t1", "user", "hello there"))
        assert not (b.files / "memory").exists() or not list((b.files / "memory").glob("*"))
        assert sorted(p.name for p in b.files.iterdir()) == ["AGENTS.md", "SOUL.md",
                                                             "USER.md"]


async def test_replayed_events_are_logged_at_their_own_dates(tmp_path: Path) -> None:
    clock = ManualClock(datetime(2023, 5, 1, tzinfo=UTC).timestamp())
    async with workspace_home(tmp_path, clock) as b:
        for day in (3, 9, 27):
            at = datetime(2023, 5, day, 13, 56, tzinfo=UTC).timestamp()
            clock.t = at  # a replay clock follows the events' dates
            await b.facts.remember("user", f"Caroline went hiking on May {day}.")
            await b.store.append([cev.fact_set(SCOPE, f"hike{day}", "done")], at)
        await b.ws.catch_up()
        assert sorted(p.name for p in (b.files / "memory").glob("*.md")) == [
            "2023-05-03.md", "2023-05-09.md", "2023-05-27.md"]
        assert "## 2023-05-09 13:56 - Decision: hike9" in \
            (b.files / "memory" / "2023-05-09.md").read_text()


def test_an_unknown_time_zone_is_refused_by_name(tmp_path: Path) -> None:
    p = tmp_path / "solace.toml"
    p.write_text('[workspace]\ntimezone = "Mars/Olympus"\n')
    with pytest.raises(ConfigError, match="Mars/Olympus"):
        load_config(p)
