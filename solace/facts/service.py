"""Fact memory: remember, recall, extract after a turn, compact, evict, delete.

:class:`FactMemory` is the one writer of ``memfact`` events and the owner of the
projection built from them. Every write is read-first-then-classified
(:mod:`solace.facts.classify`) against the memory id's live facts in its store,
appended to the substrate as one batch, and only then folded into the projection,
so a rebuilt projection equals the live one. Writes are serialised by one lock:
two callers never classify against the same stale view.

Blocking work (embedding, sealing keys, the compactor, an LLM) goes through the
offloader. Time comes from the injected clock.
"""

from __future__ import annotations

import functools
import logging
import secrets
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import trio

from solace.clock import Clock, check_instant
from solace.config.schema import Config, StoreConfig
from solace.conversation.events import Appended, Draft
from solace.conversation.store import AsyncSubstrate, EventStore
from solace.facts import events as ev
from solace.facts.classify import classify, normalised
from solace.facts.errors import (
    InvalidFactError,
    InvalidMemoryIdError,
    UnknownFactIdError,
    UnknownStoreError,
)
from solace.facts.model import (
    MEMORY_ID_RULE,
    Candidate,
    Compaction,
    Exchange,
    Fact,
    FactStatus,
    RecallBlock,
    Source,
    WriteClass,
    WriteResult,
    is_memory_id,
)
from solace.facts.projection import FactProjection
from solace.facts.ranking import evict_order, render_block, score_facts
from solace.facts.snapshot import encode as encode_snapshot
from solace.facts.snapshot import read_snapshot
from solace.facts.snapshot import write_encoded as write_snapshot
from solace.facts.vault import KeyVault
from solace.models.embedder import Embedder
from solace.models.guard import Guard
from solace.models.llm import LLM
from solace.models.tokenizer import Tokenizer
from solace.offload import Offloader
from solace.projections import Batched, replay
from solace.validation import InvalidObservationError, check_text

__all__ = ["MAX_FACT_CHARS", "FactMemory", "check_memory_id"]

log = logging.getLogger("solace.facts")

MAX_FACT_CHARS = 2000


def check_memory_id(memory_id: object) -> str:
    """``memory_id`` if it follows the rule; :class:`InvalidMemoryIdError` naming it."""
    if not is_memory_id(memory_id):
        raise InvalidMemoryIdError(f"memory id {memory_id!r} is not valid: {MEMORY_ID_RULE}")
    return str(memory_id)


def _check_fact(text: object, importance: object) -> tuple[str, float]:
    try:
        text = check_text(text).strip()
    except InvalidObservationError as exc:
        raise InvalidFactError(f"fact {exc}") from None
    if len(text) > MAX_FACT_CHARS:
        raise InvalidFactError(f"a fact has at most {MAX_FACT_CHARS} characters, got "
                               f"{len(text)} ({text[:40]!r}...)")
    if isinstance(importance, bool) or not isinstance(importance, int | float) \
            or not 0.0 <= float(importance) <= 1.0:
        raise InvalidFactError(f"importance must be a number in [0, 1], got {importance!r}")
    return text, float(importance)


#: The name fact memory's part of a replay goes by (:meth:`FactMemory.replaying`).
FACTS_PROJECTION = "fact memory"


class FactMemory:
    """Every memory id's facts: the event-sourced store the runtime and operators use.

    Open with :meth:`open` (replays the substrate). ``counters`` counts writes by
    class, compactions accepted and refused (by reason), evictions, and LLM calls.
    """

    def __init__(self, *, substrate: AsyncSubstrate, vault: KeyVault, config: Config,
                 embedder: Embedder, tokenizer: Tokenizer, offloader: Offloader,
                 clock: Clock, llm: LLM | None = None, guard: Guard | None = None,
                 snapshot: Path | None = None) -> None:
        self._store = EventStore(substrate)
        #: Where the projection is kept across restarts (:meth:`snapshot`), or None.
        self.snapshot_path = snapshot
        self._replayed_to = 0  # the log's head at the last replay (or kept snapshot)
        self._vault = vault
        self.config = config
        self._embedder = embedder
        self._tokenizer = tokenizer
        self._offloader = offloader
        self._clock = clock
        self.llm = llm
        self.guard = guard
        self.projection = FactProjection()
        self.counters: Counter[str] = Counter()
        self._vectors: dict[str, np.ndarray] = {}
        self._tokens: dict[str, int] = {}
        #: Awaited with every batch of ``memfact`` events this memory appends (writes,
        #: confirms, evictions, compactions, deletes, forgets), after the projection has
        #: them: how a follower (the workspace) sees every change. Must not raise.
        self.on_appended: Callable[[Sequence[Appended]], Awaitable[None]] | None = None
        self._lock = trio.Lock()
        self._llm_failures = 0

    @classmethod
    async def open(cls, **kwargs: Any) -> FactMemory:
        """A fact memory with its projection rebuilt from the substrate (from its kept
        snapshot, if it has a usable one, and the events after it)."""
        memory = cls(**kwargs)
        await memory.load_snapshot()
        await memory.catch_up()
        return memory

    async def load_snapshot(self) -> bool:
        """Start from the kept snapshot (see :mod:`solace.facts.snapshot`) if there is a
        usable one; returns whether there was. Call before the first replay."""
        if self.snapshot_path is None:
            return False
        substrate = self._store.substrate
        kept = await self._offloader.run(functools.partial(
            read_snapshot, self.snapshot_path, ring=substrate.key_ring, key_of=self._vault.key,
            last_id=int(substrate.last_id)))
        if kept is None:
            return False
        self.projection, self._replayed_to = kept
        return True

    async def snapshot(self) -> bool:
        """Keep the projection for the next open, every text sealed under its fact's key
        (taken under the write lock: it holds every ``memfact`` event up to the log's
        head then). Returns False without a snapshot path.

        Raises:
            solace.sealed.StorageFullError, OSError: not written; the file holds what
            it held (a cache: the next open replays more).
        """
        if self.snapshot_path is None:
            return False
        substrate = self._store.substrate
        async with self._lock:
            head = int(substrate.last_id)
            data = await self._offloader.run(encode_snapshot, self.projection, head,
                                             self._vault.key)
        await self._offloader.run(functools.partial(
            write_snapshot, self.snapshot_path, data, ring=substrate.key_ring))
        return True

    async def catch_up(self) -> int:
        """Fold in every ``memfact`` event after the last one seen; returns how many."""
        report = await replay(self._store.substrate, [self.replaying()])
        return report.read

    def replaying(self) -> Batched:
        """This memory's part of a replay (:func:`solace.projections.replay`): the
        ``memfact`` events after the last one folded in, their texts opened with the
        vault's keys off the event loop, folded in when the replay finishes."""
        return Batched(FACTS_PROJECTION, frozenset({ev.FACT_KIND}),
                       max(self.projection.last_entry_id, self._replayed_to),
                       self._fold_replayed)

    async def _fold_replayed(self, events: list[Any], head: int) -> None:
        self.projection.apply_all(await self._offloader.run(self._opened, events))
        self._replayed_to = max(self._replayed_to, head)

    def _opened(self, events: Sequence[Any]) -> list[tuple[Any, str | None]]:
        out: list[tuple[Any, str | None]] = []
        for e in events:
            text = None
            if e.attrs.get("op") == "write":
                memory_id, fact_id = e.attrs.get("memory_id", ""), e.attrs.get("fact_id", "")
                key = self._vault.key(memory_id, fact_id)
                if key is not None:
                    text = ev.open_text(e.content, key=key, memory_id=memory_id,
                                        fact_id=fact_id)
            out.append((e, text))
        return out

    # ------------------------------------------------------------------ policy
    def store_name(self, store: str | None = None, agent: str | None = None) -> str:
        """The store of a request: its own, else the agent's configured one, else default."""
        if not store and agent and agent in self.config.agents:
            store = self.config.agents[agent].memory_store
        name = store or "default"
        if name not in self.config.stores:
            known = ", ".join(sorted(self.config.stores))
            raise UnknownStoreError(f"unknown store {name!r} (stores are {known})")
        return name

    def store(self, name: str) -> StoreConfig:
        return self.config.stores[self.store_name(name)]

    # ------------------------------------------------------------------ reading
    def memory_ids(self, store: str | None = None) -> list[str]:
        """The ids holding facts (optionally in ``store``), sorted."""
        if store is not None:
            self.store_name(store)
        return self.projection.memory_ids(store)

    def facts(self, memory_id: str, *, include_history: bool = False) -> list[Fact]:
        """``memory_id``'s recallable facts (or all, history included), oldest first."""
        check_memory_id(memory_id)
        facts = self.projection.facts(memory_id)
        return facts if include_history else [f for f in facts if f.recallable]

    def export(self, memory_id: str) -> list[dict[str, Any]]:
        """Every fact of ``memory_id`` (history included) as JSON-ready objects."""
        return [fact_record(f) for f in self.facts(memory_id, include_history=True)]

    async def recall(self, query: str, memory_id: str, *, store: str | None = None,
                     k: int | None = None, agent: str | None = None) -> RecallBlock:
        """The ``k`` (else the store's ``top_k``) facts of ``memory_id`` best matching
        ``query``, decayed, above ``min_score``, rendered as one hidden-context block."""
        check_memory_id(memory_id)
        name = self.store_name(store, agent)
        if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
            raise InvalidFactError(f"k must be a positive integer, got {k!r}")
        try:
            query = check_text(query)
        except InvalidObservationError as exc:
            raise InvalidFactError(f"query {exc}") from None
        live = self.projection.live(memory_id, name)
        if not live:
            return render_block(memory_id, name, [], self._tokenizer.count)
        vectors = await self._vectors_of(live)
        (qv,) = await self._embed([query])
        scored = score_facts(query, qv, live, vectors, now=self._clock.now(),
                             store=self.config.stores[name],
                             lexical_weight=self.config.facts.lexical_weight, k=k,
                             recency_band=self.config.facts.recency_band)
        return render_block(memory_id, name, scored, self._tokenizer.count)

    # ------------------------------------------------------------------ writing
    async def remember(self, memory_id: str, text: str, *, store: str | None = None,
                       importance: float | None = None, agent: str | None = None,
                       source: Source = "remember", slot: str = "",
                       as_of: float | None = None) -> WriteResult:
        """Classify and write one fact (see :mod:`solace.facts.classify`)."""
        text, imp = _check_fact(text, 0.5 if importance is None else importance)
        (result,) = await self.write(memory_id, [Candidate(text, imp, slot)], store=store,
                                     agent=agent, source=source, as_of=as_of)
        return result

    async def write(self, memory_id: str, candidates: Sequence[Candidate], *,
                    store: str | None = None, agent: str | None = None,
                    source: Source = "remember",
                    as_of: float | Sequence[float] | None = None) -> list[WriteResult]:
        """Classify and write ``candidates`` in order, as one batch; then evict and
        compact if the store says so. ``as_of``: when each was stated (default now)."""
        check_memory_id(memory_id)
        name = self.store_name(store, agent)
        for c in candidates:
            _check_fact(c.text, c.importance)
        now = self._clock.now()
        stamps = _stamps(as_of, len(candidates), now)
        async with self._lock:
            results = await self._write_locked(memory_id, name, candidates, stamps,
                                               agent or ev.FACT_AGENT, source, now)
            if any(r.write_class is not WriteClass.NOOP for r in results):
                await self._evict(memory_id, name, agent or ev.FACT_AGENT, now)
                await self._compact(memory_id, name, agent or ev.FACT_AGENT, force=False)
        return results

    async def _write_locked(self, memory_id: str, store: str, candidates: Sequence[Candidate],
                            stamps: Sequence[float], agent: str, source: Source,
                            now: float) -> list[WriteResult]:
        policy = self.config.stores[store]
        live = self.projection.live(memory_id, store)
        vectors = list(await self._vectors_of(live)) if live else []
        cand_vectors = await self._embed([c.text for c in candidates])
        plans: list[tuple[Candidate, Any, str]] = []  # candidate, decision, new fact id
        for cand, vec, stamp in zip(candidates, cand_vectors, stamps, strict=True):
            matrix = np.stack(vectors) if vectors else np.zeros((0, len(vec)), np.float32)
            decision = classify(cand, vec, live, matrix,
                                as_of=stamp, dedup_threshold=policy.deduplication_threshold,
                                update_similarity=self.config.facts.update_similarity,
                                lexical_weight=self.config.facts.lexical_weight)
            fact_id = "" if decision.write_class is WriteClass.NOOP else _new_fact_id()
            plans.append((cand, decision, fact_id))
            if fact_id:  # later candidates of the batch are classified against it too
                pending = _pending_fact(fact_id, memory_id, store, cand, decision, source,
                                        stamp)
                if decision.write_class is WriteClass.UPDATE and decision.target is not None:
                    at = live.index(decision.target)
                    del live[at], vectors[at]
                live.append(pending)
                vectors.append(vec)
                self._vectors[fact_id] = vec
        new_ids = [fid for _, _, fid in plans if fid]
        keys = await self._offloader.run(self._vault.create, memory_id, new_ids) if new_ids \
            else {}
        drafts: list[Draft] = []
        for (cand, decision, fact_id), stamp in zip(plans, stamps, strict=True):
            target = decision.target.fact_id if decision.target is not None else ""
            stated = None if stamp == now else stamp
            if not fact_id:
                drafts.append(ev.confirm_draft(memory_id, target, decision.reason, agent,
                                               stated))
                continue
            written = ev.WrittenFact(
                fact_id, memory_id, store, decision.write_class, decision.reason,
                cand.importance, source, cand.slot,
                supersedes=(target,) if decision.write_class is WriteClass.UPDATE else (),
                conflicts=(target,) if decision.write_class is WriteClass.CONFLICT else (),
                as_of=stated)
            sealed = ev.seal_text(cand.text, key=keys[fact_id], memory_id=memory_id,
                                  fact_id=fact_id, nonce=secrets.token_bytes(12))
            drafts.append(ev.write_draft(written, sealed, agent))
        appended = await self._append(drafts, now, {fid: c.text for c, _, fid in plans if fid})
        results = []
        for (_cand, decision, fact_id), _event in zip(plans, appended, strict=True):
            target = decision.target.fact_id if decision.target is not None else ""
            fact = self.projection.get(memory_id, fact_id or target)
            assert fact is not None
            self.counters[f"write_{decision.write_class.value}"] += 1
            results.append(WriteResult(decision.write_class, decision.reason, fact,
                                       (target,) if target and fact_id else ()))
        return results

    async def _append(self, drafts: Sequence[Draft], now: float,
                      texts: Mapping[str, str]) -> list[Appended]:
        appended = await self._store.append(drafts, now)
        for event in appended:
            self.projection.apply(event, texts.get(event.attrs.get("fact_id", "")))
        if self.on_appended is not None:
            await self.on_appended(appended)
        return appended

    async def _evict(self, memory_id: str, store: str, agent: str, now: float) -> None:
        policy = self.config.stores[store]
        live = [f for f in self.projection.live(memory_id, store)]
        if policy.max_entries <= 0 or len(live) <= policy.max_entries:
            return
        leaving = evict_order(live, policy.eviction_policy)[: len(live) - policy.max_entries]
        ids = [f.fact_id for f in leaving]
        await self._append([ev.evict_draft(memory_id, ids, policy.eviction_policy, agent)],
                           now, {})
        self.counters["evicted"] += len(ids)

    async def extract_turn(self, memory_id: str, exchange: Exchange, *,
                           store: str | None = None,
                           agent: str | None = None) -> list[WriteResult]:
        """Distil one exchange into at most ``max_extractions_per_turn`` facts and write
        them (classified). ``extraction_mode``: ``none`` writes nothing; ``llm`` makes
        one guarded LLM call and falls back to the rules when the LLM is absent, fails
        or its facts fail the guard (after ``llm_failures_before_rules`` such turns in
        a row, the rules alone); ``rules`` is the deterministic extractor."""
        check_memory_id(memory_id)
        name = self.store_name(store, agent)
        policy = self.config.stores[name]
        limit = policy.max_extractions_per_turn
        if policy.extraction_mode == "none" or limit == 0:
            return []
        candidates: list[Candidate] | None = None
        if (policy.extraction_mode == "llm" and self.llm is not None
                and self._llm_failures < self.config.facts.llm_failures_before_rules):
            from solace.facts.extract_llm import extract_with_llm

            self.counters["llm_calls"] += 1
            candidates = await self._offloader.run(
                extract_with_llm, exchange, llm=self.llm, guard=self.guard, limit=limit)
            if candidates is None:
                self._llm_failures += 1
                self.counters["llm_extraction_refused"] += 1
            else:
                self._llm_failures = 0
        if candidates is None:
            from solace.facts.extract_rules import extract_facts

            candidates = extract_facts(exchange, limit=limit)
        candidates = list(candidates)[:limit]
        if not candidates:
            return []
        return await self.write(memory_id, candidates, store=name, agent=agent,
                                source="extract", as_of=exchange.ts or None)

    # ------------------------------------------------------------------ compaction
    async def consolidate(self, memory_id: str, *, store: str | None = None) -> list[Compaction]:
        """Compact ``memory_id``'s live facts now, in each store it has facts in (or
        ``store``), whatever their size. Returns one verdict per store tried."""
        check_memory_id(memory_id)
        stores = [self.store_name(store)] if store else sorted(
            {f.store for f in self.projection.live(memory_id)})
        verdicts = []
        async with self._lock:
            for name in stores:
                verdict = await self._compact(memory_id, name, ev.FACT_AGENT, force=True)
                if verdict is not None:
                    verdicts.append(verdict)
        return verdicts

    async def _compact(self, memory_id: str, store: str, agent: str,
                       *, force: bool) -> Compaction | None:
        policy = self.config.stores[store]
        inputs = [f for f in self.projection.live(memory_id, store)
                  if f.status is FactStatus.LIVE]
        if len(inputs) < 2 or (not force and policy.compact_above_tokens <= 0):
            return None
        texts = [f.text for f in inputs]
        if not force and self._tokens_of(inputs) <= policy.compact_above_tokens:
            return None
        from solace.facts.compactor import propose

        vectors = await self._vectors_of(inputs)
        llm = self.llm if policy.extraction_mode == "llm" else None
        verdict: Compaction = await self._offloader.run(
            propose, texts, vectors, llm=llm, count_tokens=self._tokenizer.count,
            threshold=self.config.facts.compact_similarity)
        if llm is not None:
            self.counters["llm_calls"] += 1
        if not verdict.accepted:
            self.counters[f"compaction_refused_{verdict.reason}"] += 1
            log.info("compaction of %s refused: %s %s", memory_id, verdict.reason,
                     verdict.detail)
            return verdict
        kept = {normalised(t): f for f, t in zip(inputs, texts, strict=True)}
        outputs = [t for t in verdict.outputs if normalised(t) not in kept]
        unchanged = {normalised(t) for t in verdict.outputs} & set(kept)
        superseded = [f for f in inputs if normalised(f.text) not in unchanged]
        if not superseded:
            return verdict
        # No new text (the merge only dropped restatements): the dropped facts are
        # still superseded, by the kept facts that say them.
        new_ids = [_new_fact_id() for _ in outputs]
        keys = await self._offloader.run(self._vault.create, memory_id, new_ids) \
            if new_ids else {}
        importance = max(f.importance for f in superseded)
        reason = f"compaction of {len(superseded)} facts into {len(outputs)}"
        drafts = []
        for fid, text in zip(new_ids, outputs, strict=True):
            written = ev.WrittenFact(fid, memory_id, store, WriteClass.ADD, reason, importance,
                                     "compact")
            sealed = ev.seal_text(text, key=keys[fid], memory_id=memory_id, fact_id=fid,
                                  nonce=secrets.token_bytes(12))
            drafts.append(ev.write_draft(written, sealed, agent))
        drafts.append(ev.compact_draft(memory_id, store, [f.fact_id for f in superseded],
                                       new_ids, reason, agent))
        await self._append(drafts, self._clock.now(), dict(zip(new_ids, outputs, strict=True)))
        self.counters["compactions"] += 1
        return verdict

    # ------------------------------------------------------------------ deleting
    async def delete(self, memory_id: str, fact_id: str) -> Fact:
        """Delete one fact for good: its key is destroyed, then a ``delete`` event logged.

        Raises:
            UnknownFactIdError: ``memory_id`` holds no fact ``fact_id``.
        """
        check_memory_id(memory_id)
        async with self._lock:
            fact = self.projection.get(memory_id, fact_id)
            if fact is None:
                raise UnknownFactIdError(f"memory id {memory_id!r} has no fact {fact_id!r}")
            await self._offloader.run(self._vault.destroy, memory_id, [fact_id])
            await self._append([ev.delete_draft(memory_id, fact_id, ev.FACT_AGENT)],
                               self._clock.now(), {})
            self._vectors.pop(fact_id, None)
            self._tokens.pop(fact_id, None)
            self.counters["deleted"] += 1
            return fact

    async def forget(self, memory_id: str) -> int:
        """Forget every fact of ``memory_id`` (keys destroyed first); returns how many."""
        check_memory_id(memory_id)
        async with self._lock:
            facts = self.projection.facts(memory_id)
            held = await self._offloader.run(self._vault.destroy_all, memory_id)
            if facts or held:
                await self._append([ev.forget_draft(memory_id, ev.FACT_AGENT)],
                                   self._clock.now(), {})
            for f in facts:
                self._vectors.pop(f.fact_id, None)
                self._tokens.pop(f.fact_id, None)
            self.counters["forgotten"] += len(facts)
            return len(facts)

    # ------------------------------------------------------------------ vectors
    async def _embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = await self._offloader.run(self._embedder.embed, list(texts))
        vectors = np.asarray(vectors, dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms == 0, 1.0, norms)

    def _tokens_of(self, facts: Sequence[Fact]) -> int:
        """Tokens of ``facts`` one per line (WordPiece counts add up over whitespace), each
        fact counted once per process: the budget check runs after every write."""
        missing = [f for f in facts if f.fact_id not in self._tokens]
        for f, n in zip(missing, self._tokenizer.count_many([f.text for f in missing]),
                        strict=True):
            self._tokens[f.fact_id] = n
        return sum(self._tokens[f.fact_id] for f in facts)

    async def _vectors_of(self, facts: Sequence[Fact]) -> np.ndarray:
        missing = [f for f in facts if f.fact_id not in self._vectors]
        if missing:
            for f, v in zip(missing, await self._embed([f.text for f in missing]), strict=True):
                self._vectors[f.fact_id] = v
        return np.stack([self._vectors[f.fact_id] for f in facts])


def _stamps(as_of: float | Sequence[float] | None, n: int, now: float) -> list[float]:
    """When each of ``n`` candidates was stated: ``now``, one instant, or one each."""
    if as_of is None:
        return [now] * n
    many = list(as_of) if isinstance(as_of, list | tuple) else [as_of] * n
    if len(many) != n:
        raise InvalidFactError(f"as_of has {len(many)} instants for {n} facts")
    out = []
    for t in many:
        try:
            out.append(check_instant(t, name="as_of"))
        except (TypeError, ValueError) as exc:
            raise InvalidFactError(str(exc)) from None
    return out


def _new_fact_id() -> str:
    return "f" + secrets.token_hex(6)


def _pending_fact(fact_id: str, memory_id: str, store: str, cand: Candidate, decision: Any,
                  source: Source, stamp: float) -> Fact:
    return Fact(fact_id, memory_id, store, cand.text, cand.importance, FactStatus.LIVE,
                stamp, stamp, 1, source, decision.write_class, decision.reason, cand.slot)


def fact_record(f: Fact) -> dict[str, Any]:
    """One fact as a JSON object (the export format, and ``--json`` output)."""
    return {
        "id": f.fact_id, "memory_id": f.memory_id, "store": f.store, "text": f.text,
        "status": f.status.value, "importance": round(f.importance, 4),
        "mentions": f.mentions, "created": f.created, "last_confirmed": f.last_confirmed,
        "source": f.source, "class": f.write_class.value, "reason": f.reason, "slot": f.slot,
        "superseded_by": f.superseded_by, "conflicts_with": list(f.conflicts_with),
    }
