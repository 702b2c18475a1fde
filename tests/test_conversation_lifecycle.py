"""Lifecycle triggers: the 10-message drift interval, the 2,000 ms trailing-edge
debounce of exit triggers, the hasEvaluated guard, and fire-and-forget evaluation
whose errors are swallowed and logged."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
import trio
import trio.testing

from solace.config import ConversationConfig
from solace.conversation import Scope
from solace.conversation.testing import Harness, open_harness
from solace.models import HashingEmbedder

SCOPE = Scope("ada", "Main", "acme")
NO_DRIFT = ConversationConfig(drift_threshold=-1.0)


async def _chat(h: Harness, sid: str, n: int, start: int = 0) -> None:
    for i in range(start, start + n):
        await h.conv.add_message(sid, "user" if i % 2 == 0 else "assistant",
                                 f"Budget spreadsheet row {i}: rent, food, travel.")


async def test_debounce_coalesces_a_burst_of_three_exit_triggers_into_one_evaluation(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert ConversationConfig().debounce_ms == 2000
    async with open_harness(tmp_path / "sub", config=NO_DRIFT) as h:
        s = await h.conv.open_session(SCOPE)
        await _chat(h, s.session_id, 4)
        calls: list[tuple[float, str]] = []
        schedule = h.conv.lifecycle.evaluate

        def spy(session_id: str, trigger: str = "manual") -> None:
            calls.append((trio.current_time(), trigger))
            schedule(session_id, trigger)  # type: ignore[arg-type]

        monkeypatch.setattr(h.conv.lifecycle, "evaluate", spy)
        t0 = trio.current_time()
        h.conv.on_visibility_hidden(s.session_id)  # tab switch ...
        await trio.sleep(0.5)
        h.conv.on_disconnect(s.session_id)  # ... socket drops ...
        await trio.sleep(0.5)
        h.conv.on_navigation(s.session_id)  # ... page navigates away
        await trio.sleep(1.999)
        assert calls == []  # trailing edge: 2 s after the LAST trigger
        await trio.sleep(0.002)
        assert calls == [(pytest.approx(t0 + 3.0), "navigation")]
        await h.conv.settle()
        await trio.sleep(10)
        assert len(calls) == 1
        assert h.conv.stats()["evaluations"] == 1
        assert h.conv.stats()["debounced"] == 1
        assert h.conv.topic(s.active_topic_id).summary_count == 4


async def test_has_evaluated_suppresses_reevaluation_until_a_new_message(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_harness(tmp_path / "sub", config=NO_DRIFT) as h:
        s = await h.conv.open_session(SCOPE)
        sid = s.session_id
        await _chat(h, sid, 3)
        first = await h.conv.evaluate_now(sid, "visibility_hidden")
        assert first is not None and first.outcome == "refreshed"
        assert h.conv.has_evaluated(sid)
        again = await h.conv.evaluate_now(sid, "disconnect")
        assert again is not None and again.outcome == "skipped"
        for trigger in (h.conv.on_navigation, h.conv.on_disconnect):
            trigger(sid)
        await trio.sleep(3)
        await h.conv.settle()
        assert h.conv.summariser.counts["deterministic"] == 1  # nothing re-summarised
        await _chat(h, sid, 1, start=3)
        assert not h.conv.has_evaluated(sid)
        third = await h.conv.evaluate_now(sid, "navigation")
        assert third is not None and third.outcome == "refreshed"
        assert h.conv.summariser.counts["deterministic"] == 2


async def test_has_evaluated_is_reset_when_the_active_topic_changes(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_harness(tmp_path / "sub", config=NO_DRIFT) as h:
        s = await h.conv.open_session(SCOPE)
        await _chat(h, s.session_id, 2)
        await h.conv.evaluate_now(s.session_id)
        assert h.conv.has_evaluated(s.session_id)
        await h.conv.new_topic(s.session_id)
        assert not h.conv.has_evaluated(s.session_id)


async def test_drift_interval_fires_an_evaluation_at_message_10(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    assert ConversationConfig().drift_interval == 10
    async with open_harness(tmp_path / "sub", config=NO_DRIFT) as h:
        s = await h.conv.open_session(SCOPE)
        await _chat(h, s.session_id, 9)
        await h.conv.settle()
        assert h.conv.stats()["evaluations"] == 0
        await _chat(h, s.session_id, 1, start=9)
        await h.conv.settle()
        assert h.conv.stats()["evaluations"] == 1
        assert h.conv.topic(s.active_topic_id).summary_count == 10
        await _chat(h, s.session_id, 10, start=10)
        await h.conv.settle()
        assert h.conv.stats()["evaluations"] == 2


class BrokenEmbedder(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.broken = True

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self.broken:
            raise RuntimeError("embedder crashed")
        return super().embed(texts)


async def test_evaluation_errors_are_swallowed_and_logged(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    embedder = BrokenEmbedder()
    async with open_harness(tmp_path / "sub", embedder=embedder) as h:
        s = await h.conv.open_session(SCOPE)
        await _chat(h, s.session_id, 8)  # long enough for a drift check (embedding)
        with caplog.at_level(logging.ERROR, logger="solace.conversation"):
            assert await h.conv.evaluate_now(s.session_id) is None  # no exception
            h.conv.evaluate(s.session_id, "disconnect")  # fire-and-forget: returns at once
            await h.conv.settle()
            h.conv.evaluate("no-such-session")
            await h.conv.settle()
        errors = [r for r in caplog.records if r.levelno == logging.ERROR]
        assert len(errors) == 3
        assert "embedder crashed" in errors[0].exc_text  # type: ignore[operator]
        assert "no-such-session" in errors[2].getMessage()
        assert h.conv.stats()["evaluation_errors"] == 3
        assert len(h.conv.thread(s.active_topic_id)) == 8  # nothing lost
        assert not h.conv.has_evaluated(s.session_id)  # so the next trigger retries
        embedder.broken = False
        report = await h.conv.evaluate_now(s.session_id)
        assert report is not None and report.outcome in ("refreshed", "forked")
