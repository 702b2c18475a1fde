"""The conversation projection kept across restarts: a reopen folds only the tail after
the snapshot's checkpoint, and equals a full replay; a bad snapshot is refused."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from solace.conversation import Scope
from solace.conversation.service import open_conversations
from solace.conversation.snapshot import SnapshotRefused, decode, encode
from solace.conversation.testing import Harness, open_harness

SCOPE = Scope("ada", "Main", "acme")


@pytest.fixture
async def h(tmp_path: Path, autojump_clock: trio.testing.MockClock) -> AsyncIterator[Harness]:
    async with open_harness(tmp_path / "substrate") as harness:
        yield harness


async def _talk(h: Harness, sid: str, n: int, about: str) -> None:
    for i in range(n):
        await h.conv.add_message(sid, "user", f"{about}, part {i}. I prefer trains.")
        await h.conv.add_message(sid, "assistant", f"Noted {about} {i}.")


async def _busy(h: Harness) -> str:
    conv = h.conv
    sid = (await conv.open_session(SCOPE)).session_id
    await _talk(h, sid, 3, "Plan the Lisbon trip")
    await conv.dispatch_tool("notes", {"operation": "$set", "content": "Trains, not cars."},
                             session=sid)
    await conv.dispatch_tool("important_info",
                             {"operation": "$set", "key": "home_city", "value": "Porto"},
                             session=sid)
    first = conv.active_topic(sid).topic_id
    await conv.new_topic(sid, title="Tax return")
    await conv.curate(first, "promote")
    await conv.evaluate_now(sid)
    return sid


class CountingSubstrate:
    """The harness's substrate, recording what each scan asked for."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.scans: list[dict[str, Any]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def scan(self, *args: Any, **kwargs: Any) -> Any:
        self.scans.append(kwargs)
        return await self.inner.scan(*args, **kwargs)


async def _reopen(h: Harness, snapshot: Path | None, substrate: Any = None) -> Any:
    return await open_conversations(substrate=substrate or h.substrate, snapshot=snapshot,
                                    **h.options)


async def test_a_reopen_from_a_snapshot_folds_the_tail_and_equals_a_full_replay(
    h: Harness, tmp_path: Path,
) -> None:
    path = tmp_path / "conversation" / "projection.sealed"
    sid = await _busy(h)
    h.conv.snapshot_path = path
    assert await h.conv.snapshot()
    checkpoint = h.substrate.last_id
    await _talk(h, sid, 2, "And the return flight")
    await h.conv.curate(h.conv.active_topic(sid).topic_id, "promote")
    counting = CountingSubstrate(h.substrate)
    reopened = await _reopen(h, path, counting)
    full = await _reopen(h, None)
    assert reopened.projection.state() == full.projection.state() == h.conv.projection.state()
    assert reopened.projection.max_topic_no == full.projection.max_topic_no
    (scan,) = counting.scans
    assert set(scan["kinds"].values()) == {checkpoint}  # only the tail is read


async def test_encode_then_decode_gives_the_same_projection(h: Harness) -> None:
    await _busy(h)
    again, checkpoint = decode(encode(h.conv.projection, 41))
    assert again.state() == h.conv.projection.state() and checkpoint == 41
    assert again.scope_topics == h.conv.projection.scope_topics
    assert again.facts == h.conv.projection.facts


def test_a_snapshot_of_another_format_or_garbage_is_refused() -> None:
    import msgpack

    with pytest.raises(SnapshotRefused, match="format 99"):
        decode(msgpack.packb({"format": 99}))
    with pytest.raises(SnapshotRefused, match="malformed"):
        decode(msgpack.packb({"format": 1, "checkpoint": 3}))
    with pytest.raises(SnapshotRefused):
        decode(b"\xc1 not msgpack")


async def test_a_damaged_snapshot_is_refused_and_the_whole_log_replayed(
    h: Harness, tmp_path: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    path = tmp_path / "projection.sealed"
    await _busy(h)
    h.conv.snapshot_path = path
    await h.conv.snapshot()
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    with caplog.at_level(logging.WARNING, logger="solace.sealed"):
        reopened = await _reopen(h, path)
    assert "conversation snapshot refused" in caplog.text
    assert reopened.projection.state() == h.conv.projection.state()


async def test_a_snapshot_newer_than_the_log_is_refused(
    h: Harness, tmp_path: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    from solace.conversation.snapshot import write_encoded

    path = tmp_path / "projection.sealed"
    await _busy(h)
    write_encoded(path, encode(h.conv.projection, h.substrate.last_id + 5),
                  ring=h.substrate.key_ring)
    with caplog.at_level(logging.WARNING, logger="solace.sealed"):
        reopened = await _reopen(h, path)
    assert "substrate ends at" in caplog.text
    assert reopened.projection.state() == h.conv.projection.state()
