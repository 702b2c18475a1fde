"""Opening a runtime reads the substrate once for every projection (each agent's tiers,
the conversation layer, fact memory, the workspace), and a restart with snapshots
decrypts only the tail after their checkpoints."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio
from runtime_support import fill

from solace import TrioClock, open_runtime
from solace.actors.routing import ACTORS
from solace.config import Config, ModelsConfig, SubstrateConfig
from solace.conversation import DEFAULT_SCOPE
from substrate.aio import TrioSubstrate


def config() -> Config:
    return Config(models=ModelsConfig(embedder="hashing", llm_backend="none"),
                  substrate=SubstrateConfig(fsync="never"))


class Reads:
    """Every scan a runtime's substrate makes, with what it returned."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[tuple[dict[str, Any], list[Any]]] = []
        original = TrioSubstrate.scan
        reads = self

        async def scan(sub: TrioSubstrate, *args: Any, **kwargs: Any) -> list[Any]:
            found = await original(sub, *args, **kwargs)
            reads.calls.append((dict(kwargs, args=args), found))
            return found

        monkeypatch.setattr(TrioSubstrate, "scan", scan)


async def _use(home: Path) -> int:
    async with open_runtime(home, config(), clock=TrioClock()) as rt:
        await fill(rt)
        await rt.ask("I adopted a greyhound called Pixel.")
        await rt.facts.remember("user", "Prefers invoices summarised in French")  # type: ignore[union-attr]
        await rt.settle()
        return int(rt.substrate.last_id)


async def test_a_restart_reads_the_substrate_once_and_only_the_tail(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch,
) -> None:
    head = await _use(tmp_path)
    # Agents replay perceived events from a little before their snapshot (the slack
    # covers an append ingested just after a snapshot); none here, to see the tail.
    monkeypatch.setattr("solace.memory.restore.REPLAY_SLACK", 0)
    reads = Reads(monkeypatch)
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        opening = list(reads.calls)
        assert rt.facts is not None and rt.workspace is not None
        assert rt.facts.facts("user")  # fact memory came back
        assert rt.conversations.sessions(DEFAULT_SCOPE)  # the chat's session came back
    assert len(opening) == 1  # one read for every projection
    (kwargs, found), = opening
    kinds = kwargs["kinds"]
    assert {"fade", "message", "memfact", "topic", "workspace"} <= set(kinds)
    # Every projection starts from its snapshot (the agents', the conversation layer's,
    # fact memory's, the workspace's): nothing the runtime logged is read again.
    # (a snapshot taken at close may follow a touch event written at close: >= head)
    assert min(kinds.values()) >= head
    assert all(e.entry_id > head for e in found)


async def test_a_first_open_reads_each_kind_from_the_start_once(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch,
) -> None:
    await _use(tmp_path)
    for name in (*ACTORS, "conversation", "facts", "workspace"):  # no snapshot left
        for path in (tmp_path / "memory" / name).glob("*.sealed"):
            path.unlink()
    reads = Reads(monkeypatch)
    async with open_runtime(tmp_path, config(), clock=TrioClock()):
        opening = list(reads.calls)
    (kwargs, found), = opening
    assert set(kwargs["kinds"].values()) == {0}
    ids = [e.entry_id for e in found]
    assert ids == sorted(set(ids))  # each event read once, in order
