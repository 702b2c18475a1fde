"""Test helpers for the conversation layer (like ``trio.testing``): scripted LLMs and a
harness that opens a real substrate, the layer, and its background task.

Used by the test suite, the benchmark and anyone wiring the layer; nothing here is
imported by the runtime.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from solace.clock import Clock, TrioClock
from solace.config import ConversationConfig
from solace.conversation.events import CONVERSATION_KINDS
from solace.conversation.service import Conversations, open_conversations
from solace.models.embedder import Embedder, HashingEmbedder
from solace.models.guard import Guard
from solace.models.llm import LLM, ChatMessage, LLMStats, NoLLM
from solace.models.tokenizer import Tokenizer, WordPieceTokenizer
from solace.offload import Offloader
from substrate.aio import TrioSubstrate, open_trio_substrate

__all__ = ["Harness", "ScriptedLLM", "open_harness"]


class ScriptedLLM:
    """An LLM whose ``complete_json`` replies come from a function of the messages.

    Args:
        reply: returns the object to answer with, or raises (e.g. ``LLMOutputError``).
        name: backend name (anything but ``"none"`` makes ``auto`` summaries use it).
    """

    def __init__(
        self, reply: Callable[[Sequence[ChatMessage]], dict[str, Any]], name: str = "scripted"
    ) -> None:
        self.reply = reply
        self.name = name
        self.stats = LLMStats()
        self.prompts: list[list[ChatMessage]] = []

    def complete(
        self, messages: Sequence[ChatMessage], *, max_tokens: int = 256, temperature: float = 0.0
    ) -> str:
        """The JSON text of the scripted reply."""
        return json.dumps(self.complete_json(messages, {}, max_tokens=max_tokens))

    def complete_json(
        self, messages: Sequence[ChatMessage], schema: Mapping[str, Any], *, max_tokens: int = 512
    ) -> dict[str, Any]:
        """Record the prompt, then reply (or raise) as scripted."""
        self.prompts.append(list(messages))
        self.stats.record()
        return self.reply(messages)


@dataclass
class Harness:
    """An open layer over a real (temporary) substrate, its ``run`` task started."""

    conv: Conversations
    substrate: TrioSubstrate
    path: Path
    key: bytes
    options: dict[str, Any] = field(default_factory=dict)

    async def reopen(self) -> Conversations:
        """A second layer rebuilt from the same substrate (not started)."""
        return await open_conversations(substrate=self.substrate, **self.options)


@asynccontextmanager
async def open_harness(
    path: Path,
    *,
    config: ConversationConfig | None = None,
    llm: LLM | None = None,
    embedder: Embedder | None = None,
    tokenizer: Tokenizer | None = None,
    clock: Clock | None = None,
    working_memory: Callable[[], str] | None = None,
    key: bytes | None = None,
) -> AsyncIterator[Harness]:
    """Open substrate + conversations at ``path`` and run the layer's background task.

    Defaults: the embedded ``ConversationConfig``, :class:`NoLLM` (deterministic
    summaries), :class:`HashingEmbedder`, the WordPiece tokenizer, a
    :class:`TrioClock`, and ``fsync="never"`` (tests need no durability).
    """
    key = key or secrets.token_bytes(32)
    tok = tokenizer or WordPieceTokenizer()
    options: dict[str, Any] = {
        "config": config or ConversationConfig(),
        "llm": llm or NoLLM(),
        "embedder": embedder or HashingEmbedder(),
        "tokenizer": tok,
        "guard": Guard(tokenizer=tok),
        "offloader": Offloader(2),
        "clock": clock or TrioClock(),
        "working_memory": working_memory,
    }
    sub = await open_trio_substrate(path, key, fsync="never", extra_kinds=CONVERSATION_KINDS)
    async with sub:
        conv = await open_conversations(substrate=sub, **options)
        async with trio.open_nursery() as nursery:
            await nursery.start(conv.run)
            yield Harness(conv, sub, path, key, options)
            nursery.cancel_scope.cancel()
