"""Drift detection and the silent fork: new-subject messages move to a new topic within
the bounded scan-back window; the old topic is summarised; the user is not interrupted."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import trio
import trio.testing

from solace.config import ConversationConfig
from solace.conversation import DriftSettings, Scope, detect_drift
from solace.conversation.drift import WEIGHT_CAP, message_weights
from solace.conversation.testing import open_harness

SCOPE = Scope("ada", "Main", "acme")
COOKING = [
    "How long should I knead bread dough with flour and yeast?",
    "Knead the dough ten minutes until the flour and yeast dough is elastic.",
    "Should the bread dough rise overnight in the fridge?",
    "Yes, a cold overnight rise gives the bread dough more flavour.",
    "What oven temperature for baking the bread loaf?",
    "Bake the bread loaf in a hot oven, then cool the loaf.",
]
ASTRONOMY = [
    "Which telescope is best for viewing Jupiter moons and planets?",
    "A refractor telescope shows Jupiter moons and planets well.",
    "When is Saturn visible in the night sky through a telescope?",
    "Saturn rises late; the telescope shows its rings in the night sky.",
]


def _clusters(k: int, m: int, seed: int = 0) -> tuple[np.ndarray, list[str]]:
    rng = np.random.default_rng(seed)
    a, b = rng.normal(size=64), rng.normal(size=64)
    rows = [a + 0.3 * rng.normal(size=64) for _ in range(k)]
    rows += [b + 0.3 * rng.normal(size=64) for _ in range(m)]
    vectors = np.array([r / np.linalg.norm(r) for r in rows])
    return vectors, ["user" if i % 2 == 0 else "assistant" for i in range(k + m)]


def test_detect_drift_finds_the_subject_change_at_a_user_message() -> None:
    vectors, roles = _clusters(6, 4)
    result = detect_drift(vectors, roles, DriftSettings())
    assert result.drifted and result.split == 6
    same, roles = _clusters(10, 0)
    assert not detect_drift(same, roles, DriftSettings()).drifted


@pytest.mark.parametrize("k, m", [(2, 12), (4, 10), (6, 8), (8, 6), (10, 4), (12, 2)])
def test_split_candidates_never_reach_past_the_scan_back_window(k: int, m: int) -> None:
    vectors, roles = _clusters(k, m, seed=k)
    settings = DriftSettings(scan_back=4, context=10, min_segment=2, threshold=0.9)
    result = detect_drift(vectors, roles, settings)
    assert result.split is not None and len(roles) - result.split <= 4


async def test_drift_at_the_interval_forks_silently(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_harness(tmp_path / "sub") as h:
        s = await h.conv.open_session(SCOPE)
        sid, old = s.session_id, s.active_topic_id
        for i, text in enumerate(COOKING + ASTRONOMY):
            await h.conv.add_message(sid, "user" if i % 2 == 0 else "assistant", text)
        await h.conv.settle()  # the 10th message scheduled the check
        new = h.conv.active_topic(sid)
        assert new.topic_id != old and new.origin == "fork" and new.parent == old
        assert [i.content for i in h.conv.thread(new.topic_id)] == ASTRONOMY
        assert [i.content for i in h.conv.thread(old)] == COOKING
        closed = h.conv.topic(old)
        assert closed.closed and closed.summary and closed.summary_count == 6
        assert "bread" in closed.summary.casefold()
        # Silent: nothing was said to the user, the thread holds only what was said.
        assert sum(len(h.conv.thread(t.topic_id)) for t in h.conv.topics(sid)) == 10
        stack = await h.conv.build_context(sid)
        assert "(the conversation moved on from:" in stack.stable
        assert "Jupiter" in stack.volatile and "knead" not in stack.volatile
        assert f"- {closed.title}:" in stack.semi_stable


@pytest.mark.parametrize("scan_back, moved", [(3, 2), (20, 4)])
async def test_fork_relocation_is_bounded_by_the_scan_back_window(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, scan_back: int, moved: int
) -> None:
    config = ConversationConfig(drift_interval=100, drift_scan_back=scan_back,
                                drift_min_segment=2, drift_context=10)
    async with open_harness(tmp_path / "sub", config=config) as h:
        s = await h.conv.open_session(SCOPE)
        for i, text in enumerate(COOKING + COOKING[:4] + ASTRONOMY):
            await h.conv.add_message(s.session_id, "user" if i % 2 == 0 else "assistant", text)
        report = await h.conv.evaluate_now(s.session_id)
        assert report is not None and report.outcome == "forked"
        assert report.relocated == moved <= scan_back
        thread = h.conv.thread(report.new_topic_id)
        assert [i.content for i in thread] == ASTRONOMY[-moved:]


async def test_tool_traffic_moves_with_the_new_subject(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    config = ConversationConfig(drift_interval=100)
    async with open_harness(tmp_path / "sub", config=config) as h:
        s = await h.conv.open_session(SCOPE)
        sid = s.session_id
        for i, text in enumerate(COOKING):
            await h.conv.add_message(sid, "user" if i % 2 == 0 else "assistant", text)
        await h.conv.add_message(sid, "user", ASTRONOMY[0])
        await h.conv.record_tool_call(sid, "sky_chart", {"planet": "Jupiter"})
        for i, text in enumerate(ASTRONOMY[1:], 1):
            await h.conv.add_message(sid, "user" if i % 2 == 0 else "assistant", text)
        report = await h.conv.evaluate_now(sid)
        assert report is not None and report.outcome == "forked"
        kinds = [i.kind for i in h.conv.thread(report.new_topic_id)]
        assert kinds.count("tool_call") == 1 and kinds.count("message") == 4


def test_short_messages_weigh_less_in_the_centroids() -> None:
    weights = message_weights(["Wow!", "ok so", " ".join(["word"] * 40)])
    assert weights.tolist() == [1.0, 2.0, float(WEIGHT_CAP)]
    vectors, roles = _clusters(6, 4)
    vectors[7] = vectors[9] = vectors[0]  # short replies that embed near the old subject
    lengths = np.array([10.0] * 6 + [10.0, 1.0, 10.0, 1.0])
    plain = detect_drift(vectors, roles, DriftSettings())
    weighted = detect_drift(vectors, roles, DriftSettings(), lengths)
    assert weighted.split == 6 and weighted.similarity < plain.similarity
