"""Putting a runtime together: the models, built once, and every projection.

:func:`~solace.runtime.open_runtime` runs three steps in order: :func:`build_models`
(embedder, tokenizer, LLM, guard, ladder and the blocking-work adapter, shared by
every part), :func:`open_projections` (each agent's tiers, the conversation layer,
fact memory and the workspace, each from its snapshot if it has one, brought up to
the log's head by one replay of the substrate) and starting the actors
(:func:`~solace.runtime.start_actors`). :func:`build_retrievers` gives each agent its
side of retrieval. Nothing here starts a task.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import trio

from solace.actors.routing import ACTORS, PERCEIVED_KINDS, perceptions_for
from solace.clock import Clock
from solace.config import Config
from solace.event_reader import EventReader
from solace.home import Home
from solace.memory.candidates import Retriever
from solace.memory.derived_forms import RecordForm
from solace.memory.event_vector_files import EventVectorFiles
from solace.memory.event_vectors import EventVectorStore
from solace.memory.holdings import Holdings
from solace.memory.restore import tier_projection
from solace.memory.retrieval_forms import (
    Forms,
    UnitForms,
    fingerprint,
    read_forms,
    read_unit_forms,
    write_forms,
    write_unit_forms,
)
from solace.models.embedding_cache import SharedEmbedder
from solace.offload import Foreground, Offloader, concurrently
from solace.projections import Projection, ReplayReport, replay
from solace.retrieval_texts import rehydrate_for, resolved_turn
from solace.runtime_workspace import open_workspace_or_none

if TYPE_CHECKING:
    from solace.conversation import Conversations
    from solace.conversation.events import Appended
    from solace.facts import FactMemory
    from solace.workspace import Workspace

__all__ = [
    "EventVectors", "Kept", "Models", "Opened", "build_models", "build_retrievers",
    "keep_retrieval_forms", "open_fact_memory_or_none", "open_projections", "read_kept",
    "seed_retrieval_forms",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Models:
    """The models and adapters one runtime shares between all its parts."""

    embedder: SharedEmbedder
    tokenizer: Any
    llm: Any
    guard: Any
    ladder: Any
    offloader: Offloader
    #: recall's own worker threads (as many as ``offloader``'s: peers search at once):
    #: a recall never queues behind compression and bulk embedding in ``offloader``
    recall_offloader: Offloader
    #: held by each recall; ``offloader`` starts no call while it is held (up to
    #: ``runtime.recall_first_ms``), so a fade, a bulk embedding or an LLM call does not
    #: take the cores a recall waits for
    foreground: Foreground = field(default_factory=Foreground)


def build_models(config: Config) -> Models:
    """Build the configured models once (MiniLM, tokenizer, LLM backend, guard, ladder),
    and limit the process's BLAS and OpenMP pools to ``runtime.blas_threads``.

    Loading is offline: the embedder's weights come from an installed package or path.
    """
    from solace.memory.ladder import Ladder
    from solace.models import Guard, GuardPolicy, build_embedder, build_llm, build_tokenizer

    if config.runtime.blas_threads:  # process-wide, as the pools are
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=config.runtime.blas_threads)
    foreground = Foreground(config.runtime.recall_first_ms / 1000)
    offloader = Offloader(config.runtime.blocking_threads,
                          defers_to=foreground if config.runtime.recall_first_ms else None)
    embedder = SharedEmbedder(build_embedder(config.models))
    tokenizer = build_tokenizer(config.models)
    llm = build_llm(config.models)
    guard = Guard(GuardPolicy(keep_share=config.memory.guard_keep_share), tokenizer)
    ladder = Ladder(
        tokenizer=tokenizer, embedder=embedder, config=config.memory,
        llm=llm if config.memory.compression == "llm" else None, guard=guard,
    )
    return Models(embedder, tokenizer, llm, guard, ladder, offloader,
                  Offloader(config.runtime.blocking_threads), foreground)


@dataclass(slots=True)
class Opened:
    """What :func:`open_projections` opened besides the agents' memories.

    Attributes:
        conversations: the conversation layer.
        facts: fact memory, or None (switched off, or it failed to open or replay).
        workspace: the markdown workspace, or None (likewise).
        report: what the one replay read and applied.
    """

    conversations: Conversations
    facts: FactMemory | None
    workspace: Workspace | None
    report: ReplayReport


async def open_projections(
    memories: dict[str, Any], home: Home, config: Config, models: Models, substrate: Any,
    clock: Clock, *, working_memory: Callable[[], str],
    on_appended: Callable[[Sequence[Appended]], Awaitable[None]],
) -> Opened:
    """Open every projection of the home with one read of the substrate
    (:func:`solace.projections.replay`): each agent's tiers (into ``memories``, agent
    name -> ``AgentMemory``), the conversation layer, fact memory and the workspace.

    Every snapshot is loaded first; then the log is read once, from the oldest
    checkpoint of them all, and each projection folds its kinds. ``memories`` is
    filled in place, one agent at a time, so a caller that must snapshot what was
    opened when a later projection fails still holds the ones that did. Fact memory
    and the workspace are optional: either failing (to open or to replay) is logged
    once and the runtime runs on without it.

    Args:
        working_memory, on_appended: the conversation layer's hooks (see
            :func:`~solace.conversation.open_conversations`).
    """
    from solace.conversation import open_conversations
    from solace.facts.service import FACTS_PROJECTION
    from solace.memory.agent_memory import AgentMemory
    from solace.workspace.service import WORKSPACE_PROJECTION

    opened = await concurrently([  # the agents' snapshots read at once
        functools.partial(
            AgentMemory.opening, name, config=config.agent(name),
            memory_config=config.memory, directory=home.agent_dir(name), substrate=substrate,
            ladder=models.ladder, embedder=models.embedder, tokenizer=models.tokenizer,
            offloader=models.offloader, clock=clock,
            perceive=functools.partial(perceptions_for, name))
        for name in ACTORS])
    projections: list[Projection] = [
        tier_projection(memory, loaded, perceived=PERCEIVED_KINDS, into=memories)
        for memory, loaded in opened]
    conversations = await open_conversations(
        substrate=substrate, config=config.conversation, llm=models.llm,
        embedder=models.embedder, tokenizer=models.tokenizer, guard=models.guard,
        offloader=models.offloader, clock=clock, working_memory=working_memory,
        on_appended=on_appended, replayed=False, snapshot=home.conversation_snapshot,
    )
    projections.append(conversations.replaying())
    facts = await open_fact_memory_or_none(home, config, models, substrate, clock,
                                           replayed=False)
    if facts is not None:
        projections.append(facts.replaying())
    workspace = await open_workspace_or_none(home, config, models, substrate, clock, facts,
                                             replayed=False)
    if workspace is not None:
        projections.append(workspace.replaying())
    report = await replay(substrate, projections,
                          optional=(FACTS_PROJECTION, WORKSPACE_PROJECTION))
    if FACTS_PROJECTION in report.failed:
        facts = None
        if workspace is not None:
            workspace.facts = None
    if WORKSPACE_PROJECTION in report.failed:
        workspace = None
    log.info("opened %d projections with one replay: %d events read after entry %d",
             len(projections), report.read, report.since)
    return Opened(conversations, facts, workspace, report)


@dataclass(slots=True)
class EventVectors:
    """The runtime's map of events' raw-text embeddings (entry id -> vector, shared by
    ingest and every agent's retrieval) and the files it is kept in across restarts."""

    vectors: EventVectorStore
    files: EventVectorFiles
    ring: Any
    offloader: Offloader

    async def save(self) -> None:
        """Write the vectors not kept yet. A failed write (a full disk) is logged, not
        raised: the vectors are a cache, embedded again when retrieval needs them."""
        taken = self.vectors.frozen()  # the loop's view; the write runs in a thread
        try:
            await self.offloader.run(functools.partial(self.files.save, taken, ring=self.ring))
        except OSError as exc:
            log.error("event vectors not kept (%s); the next open embeds the events of faded "
                      "episodes again when retrieval needs them", exc)


@dataclass(frozen=True, slots=True)
class Kept:
    """What an open reads from files beside the projections' snapshots: the event
    vectors' segments (as a store of their own, for :meth:`EventVectorStore.adopt`),
    the units' forms every agent's kept forms were read against (the retrievers'
    shared units, for :func:`build_retrievers`) and each agent's retrieval forms (for
    :func:`seed_retrieval_forms`)."""

    files: EventVectorFiles
    vectors: EventVectorStore
    units: UnitForms
    forms: dict[str, Forms]


def read_kept(home: Home, config: Config, models: Models, ring: Any) -> Kept:
    """Read the kept vectors (none on a new home, or of another embedder) and the
    retrieval forms made by this code and config. Blocking: the runtime runs it in a
    thread of its own while the projections open, so neither waits for the other."""
    embedder = models.embedder
    files, vectors = EventVectorFiles.load(home.event_vectors_dir, ring=ring,
                                           embedder=embedder.name, dim=int(embedder.dim))
    stamp = _forms_fingerprint(config, models)  # parses source (once per process)
    units = read_unit_forms(home.unit_forms_dir, ring=ring, fingerprint=stamp)
    forms = {name: read_forms(home.agent_dir(name), agent=name, ring=ring, fingerprint=stamp,
                              units=units)
             for name in ACTORS}
    return Kept(files, vectors, units, forms)


def build_retrievers(
    memories: dict[str, Any], config: Config, models: Models, reader: EventReader,
    event_vectors: EventVectorStore, holdings: Holdings, units: UnitForms | None = None,
) -> dict[str, Retriever]:
    """Each agent's side of retrieval over its memory (agent name -> ``Retriever``),
    reading events through the runtime's one ``reader``, telling the runtime's one
    ``holdings`` what each agent holds. ``units``: the units' forms read at open
    (:attr:`Kept.units`), taken as the retrievers' shared units, not copied."""
    from solace.memory.ladder import rehydrate_text

    unit_forms = units if units is not None else {}  # one text per unit, whoever holds it
    record_forms: dict[str, dict[int, RecordForm]] = {name: {} for name in ACTORS}
    perspective = {name: config.agents[name].perspective for name in ACTORS}
    deriving = trio.Lock()  # one derives at a time: a sibling's or a shared unit's form once
    return {
        name: Retriever(
            memories[name], tokenizer=models.tokenizer, offloader=models.recall_offloader,
            events=reader,
            rehydrate=functools.partial(rehydrate_for, rehydrate_text, models.tokenizer,
                                        config.memory,
                                        perspective=config.agents[name].perspective),
            inject_rung=config.runtime.inject_rung,
            candidates=config.runtime.recall_candidates,
            vectors=event_vectors, embed=models.embedder.embed, unit_form=resolved_turn,
            holdings=holdings, unit_forms=unit_forms, record_forms=record_forms[name],
            sibling_forms=[record_forms[other] for other in ACTORS
                           if other != name and perspective[other] == perspective[name]],
            deriving=deriving,
        )
        for name in ACTORS
    }


def _forms_fingerprint(config: Config, models: Models) -> str:
    return fingerprint(config.memory, config.runtime.inject_rung,
                       {name: agent.perspective for name, agent in config.agents.items()},
                       getattr(models.tokenizer, "name", type(models.tokenizer).__name__),
                       sources=(type(models.tokenizer).__module__,))


def seed_retrieval_forms(retrievers: dict[str, Retriever], forms: Mapping[str, Forms]
                         ) -> None:
    """Give each retriever the texts it derived before the last close (same code and
    config only, as :func:`read_kept` read them; see
    :mod:`solace.memory.retrieval_forms`)."""
    for name, retriever in retrievers.items():
        retriever.seed(forms.get(name, Forms()))


async def keep_retrieval_forms(retrievers: dict[str, Retriever], home: Home, config: Config,
                               models: Models, ring: Any) -> None:
    """Write each retriever's derived texts for the next open: the units' texts of all
    of them first, in one file, then each one's. A failed write (a full disk) is
    logged, not raised: they are derived again when missing."""
    stamp = _forms_fingerprint(config, models)
    units: UnitForms = {}  # each unit once, whichever agents hold it
    for retriever in retrievers.values():
        units.update(retriever.unit_forms(e for e in retriever.unit_ids() if e not in units))
    try:
        await models.offloader.run(functools.partial(
            write_unit_forms, home.unit_forms_dir, units, ring=ring, fingerprint=stamp))
    except OSError as exc:
        log.error("the units' retrieval forms not kept (%s); the next open derives the "
                  "agents' forms again", exc)
        return
    del units
    for name, retriever in retrievers.items():
        try:
            await models.offloader.run(functools.partial(
                write_forms, home.agent_dir(name), retriever.forms(), agent=name, ring=ring,
                fingerprint=stamp))
        except OSError as exc:
            log.error("%s: retrieval forms not kept (%s); the next open derives them again",
                      name, exc)


async def open_fact_memory_or_none(
    home: Home, config: Config, models: Models, substrate: Any, clock: Clock, *,
    replayed: bool = True,
) -> FactMemory | None:
    """The home's fact memory (seeds 001 and 004) on the runtime's substrate and shared
    models, or None: when ``[facts] enabled = false``, or when it cannot be opened
    (an unreadable key vault, a damaged event). Either way one log line says why and
    the runtime runs on without it: requests that carry memory fields proceed
    without memory (seed 001), nothing is written, the substrate keeps every fact
    event for a later open. ``replayed`` as :func:`~solace.facts.open_fact_memory`'s.
    """
    from solace.facts import FactsDisabledError, open_fact_memory

    try:
        return await open_fact_memory(
            facts_dir=home.facts_dir, substrate=substrate, config=config,
            embedder=models.embedder, tokenizer=models.tokenizer, offloader=models.offloader,
            clock=clock, llm=None if config.models.llm_backend == "none" else models.llm,
            guard=models.guard, replayed=replayed, snapshot=home.fact_snapshot,
        )
    except FactsDisabledError:
        log.info("fact memory is switched off ([facts] enabled = false): requests carrying "
                 "a memory id proceed without memory")
    except Exception as exc:  # memory must never stop the runtime (seed 001)
        log.error("fact memory could not be opened (%s: %s); running without it",
                  type(exc).__name__, exc)
    return None
