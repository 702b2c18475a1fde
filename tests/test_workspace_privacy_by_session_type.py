"""Issue 10 §Privacy: a session is ``main`` or ``shared``; MEMORY.md loads only in main
sessions (seed 003: "MEMORY.md only loads in main sessions ... NOT in shared contexts")."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.workspace_fixtures import ManualClock, workspace_home

PRIVATE = "Caroline's bank is Monzo."


async def test_a_shared_session_loads_no_memory_md(tmp_path: Path) -> None:
    clock = ManualClock()
    async with workspace_home(tmp_path, clock) as b:
        await b.remember("Caroline plays the violin.")
        await b.ws.synthesize()
        memory = b.files / "MEMORY.md"
        memory.write_text(memory.read_text() + f"\n## Money\n- {PRIVATE}\n")
        await b.ws.synthesize()
        assert PRIVATE in memory.read_text()
        main = await b.ws.session_context(session_type="main")
        shared = await b.ws.session_context(session_type="shared")
        assert "MEMORY.md" in main.files and PRIVATE in main.stable
        assert "MEMORY.md" not in shared.files
        assert PRIVATE not in shared.stable + shared.semi_stable
        assert shared.files == ("SOUL.md", "USER.md", "AGENTS.md",
                                f"memory/{next((b.files / 'memory').glob('*.md')).name}")
        assert "Caroline plays the violin." in shared.semi_stable  # daily logs are public
        assert shared.tokens < main.tokens


async def test_an_unknown_session_type_is_refused_by_name(tmp_path: Path) -> None:
    async with workspace_home(tmp_path, ManualClock()) as b:
        with pytest.raises(ValueError, match="'discord'"):
            await b.ws.session_context(session_type="discord")


async def test_daily_logs_at_session_start_stay_within_their_budget(tmp_path: Path) -> None:
    import dataclasses

    from solace.config.schema import Config, WorkspaceConfig
    from solace.models import WordPieceTokenizer

    config = dataclasses.replace(Config(), workspace=WorkspaceConfig(daily_budget_tokens=60))
    clock = ManualClock()
    async with workspace_home(tmp_path, clock, config) as b:
        for n in range(12):
            await b.remember(f"Caroline visited museum number {n} in the old town.")
            clock.t += 120
        ctx = await b.ws.session_context(session_type="shared")
        assert WordPieceTokenizer().count(ctx.semi_stable) <= 60
        assert "museum number 11" in ctx.semi_stable  # the newest kept, the oldest dropped
        assert "museum number 0 " not in ctx.semi_stable
