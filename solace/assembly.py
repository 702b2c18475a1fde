"""Putting a runtime together: the models, built once, and every agent's memory.

:func:`~solace.runtime.open_runtime` runs three steps in order: :func:`build_models`
(embedder, tokenizer, LLM, guard, ladder and the blocking-work adapter, shared by
every part), :func:`open_memories` (each agent's tiers, loaded from its snapshot or
rebuilt from the substrate) and starting the actors
(:func:`~solace.runtime.start_actors`). :func:`build_retrievers` gives each agent its
side of retrieval. Nothing here starts a task.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

from solace.actors.routing import ACTORS, perceptions_for
from solace.clock import Clock
from solace.config import Config
from solace.home import Home
from solace.memory.candidates import Retriever
from solace.offload import Offloader
from solace.shared import EventReader, SharedEmbedder, rehydrate_for, resolved_turn

__all__ = ["Models", "build_models", "build_retrievers", "open_memories"]


@dataclass(frozen=True, slots=True)
class Models:
    """The models and adapters one runtime shares between all its parts."""

    embedder: SharedEmbedder
    tokenizer: Any
    llm: Any
    guard: Any
    ladder: Any
    offloader: Offloader


def build_models(config: Config) -> Models:
    """Build the configured models once (MiniLM, tokenizer, LLM backend, guard, ladder).

    Loading is offline: the embedder's weights come from an installed package or path.
    """
    from solace.memory.ladder import Ladder
    from solace.models import Guard, GuardPolicy, build_embedder, build_llm, build_tokenizer

    offloader = Offloader(config.runtime.blocking_threads)
    embedder = SharedEmbedder(build_embedder(config.models))
    tokenizer = build_tokenizer(config.models)
    llm = build_llm(config.models)
    guard = Guard(GuardPolicy(keep_share=config.memory.guard_keep_share), tokenizer)
    ladder = Ladder(
        tokenizer=tokenizer, embedder=embedder, config=config.memory,
        llm=llm if config.memory.compression == "llm" else None, guard=guard,
    )
    return Models(embedder, tokenizer, llm, guard, ladder, offloader)


async def open_memories(
    into: dict[str, Any], home: Home, config: Config, models: Models, substrate: Any,
    clock: Clock,
) -> None:
    """Open every agent's memory into ``into`` (agent name -> ``AgentMemory``).

    Filled in place, one agent at a time, so a caller that must snapshot what was
    opened when a later agent fails to open still holds the ones that did.
    """
    from solace.memory.agent_memory import AgentMemory

    for name in ACTORS:
        into[name] = await AgentMemory.open(
            name, config=config.agent(name), memory_config=config.memory,
            directory=home.agent_dir(name), substrate=substrate, ladder=models.ladder,
            embedder=models.embedder, tokenizer=models.tokenizer, offloader=models.offloader,
            clock=clock, perceive=functools.partial(perceptions_for, name),
        )


def build_retrievers(
    memories: dict[str, Any], config: Config, models: Models, substrate: Any,
    event_vectors: dict[int, np.ndarray],
) -> dict[str, Retriever]:
    """Each agent's side of retrieval over its memory (agent name -> ``Retriever``)."""
    from solace.memory.ladder import rehydrate_text

    reader = EventReader(substrate, models.offloader)
    return {
        name: Retriever(
            memories[name], tokenizer=models.tokenizer, offloader=models.offloader,
            events=reader,
            rehydrate=functools.partial(rehydrate_for, rehydrate_text, models.tokenizer,
                                        config.memory),
            inject_rung=config.runtime.inject_rung,
            candidates=config.runtime.recall_candidates,
            vectors=event_vectors, embed=models.embedder.embed, unit_form=resolved_turn,
        )
        for name in ACTORS
    }
