"""The fidelity ladder: moving records one rung down, merging episodes on the way.

Rung 0 is the raw event ("Speaker: content"); rung 1 its key sentences (~0.3x);
rung 2 the gist with every name, number and date (~0.1x); rung 3 an embedding and
a line of tags (~0.01x). :class:`Ladder` moves records exactly one rung per call
and, for 0->1 and 1->2, merges the records of one episode into one record that
keeps every entry id — a chat turn has no 0.1x form, an episode does. Size ratios
are measured against ``source_tokens``, the tokens of the raw events a record
stands for. :func:`rehydrate_text` rebuilds any of rungs 0-2 from substrate events.

Everything here is synchronous and may block (tokenizer, embedder, LLM): the
runtime calls it through :class:`~solace.offload.Offloader`.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import numpy as np

from solace.config import MemoryConfig, Perspective
from solace.memory.ladder.abstractive import condense
from solace.memory.ladder.episodes import group_episodes
from solace.memory.ladder.extractive import extract_key_points
from solace.memory.ladder.llm_compress import BatchCompressor, CompressionJob
from solace.memory.ladder.sentences import Turn, format_raw, split_turns
from solace.memory.ladder.survival import salient_survival
from solace.memory.ladder.tags import tag_line
from solace.memory.record import MemoryRecord
from solace.models.embedder import Embedder
from solace.models.guard import Guard, GuardPolicy
from solace.models.llm import LLM
from solace.models.tokenizer import Tokenizer

__all__ = [
    "Demotion",
    "EmbeddingSource",
    "Ladder",
    "LadderStats",
    "RawEvent",
    "mean_embedding",
    "rehydrate_text",
]

#: Where a demoted record's vector came from, as its fade event records it so a
#: rebuild can make the same vector: ``kept`` (its source's), ``mean`` (of its
#: sources', see :func:`mean_embedding`) or ``text`` (the embedding of its new text).
EmbeddingSource = Literal["kept", "mean", "text"]


def mean_embedding(vectors: Sequence[np.ndarray], weights: Sequence[float]) -> np.ndarray:
    """The unit-length weighted mean of ``vectors`` — a rung-1 merge's embedding.

    A merge's vector is the mean of its parts' (weighted by the raw tokens each
    stands for) rather than an embedding of its new text: no model call (embedding
    merged texts was a quarter of a LoCoMo replay's time), and every part counts
    even where the merged text is past the model's 256-piece window. Callers pass
    the parts in ascending record-id order, so a rebuild reproduces it exactly.
    """
    stacked = np.stack([np.asarray(v, dtype=np.float32) for v in vectors])
    w = np.asarray([max(float(x), 1.0) for x in weights], dtype=np.float32)
    mean = (w[:, None] * stacked).sum(axis=0)
    norm = float(np.linalg.norm(mean))
    return (mean / norm if norm > 0.0 else stacked[0]).astype(np.float32)


@dataclass(frozen=True, slots=True)
class Demotion:
    """One record moved one rung down.

    Attributes:
        sources: record ids of the input records merged into ``record`` (one id
            when nothing merged), ascending.
        record: a new record at the input rung + 1 (see :meth:`Ladder.demote`).
        embedding: where ``record.embedding`` came from.
    """

    sources: tuple[int, ...]
    record: MemoryRecord
    embedding: EmbeddingSource = "kept"


@dataclass(slots=True)
class LadderStats:
    """Cumulative counters of one :class:`Ladder` (read them; only the ladder writes).

    Attributes:
        demotions: output records by target rung (1, 2, 3).
        merges: output records that merged two or more inputs.
        llm_calls: LLM calls made (one per batch).
        llm_failures: calls that raised or answered outside the schema.
        generated_tokens: tokens the LLM generated (from its own counters).
        guard_accepted: LLM pieces used.
        guard_rejected: LLM pieces the guard refused (deterministic form used).
        llm_too_long: pieces the guard passed but the rung's size limit refused.
        llm_missing: records an LLM answer left out (deterministic form used).
        llm_reused: records given an earlier verdict on the same text (no call).
        llm_skipped: records given the deterministic form while the model was benched
            for failing the guard (see :class:`BatchCompressor`).
        llm_over_budget: records given the deterministic form to keep within
            ``llm_max_calls_per_event``.
        salient_in: names+numbers+dates in rung-1 texts demoted to rung 2 ...
        salient_kept: ... and how many of them the rung-2 texts kept.
    """

    demotions: dict[int, int] = field(default_factory=lambda: {1: 0, 2: 0, 3: 0})
    merges: int = 0
    llm_calls: int = 0
    llm_failures: int = 0
    generated_tokens: int = 0
    guard_accepted: int = 0
    guard_rejected: int = 0
    llm_too_long: int = 0
    llm_missing: int = 0
    llm_reused: int = 0
    llm_skipped: int = 0
    llm_over_budget: int = 0
    salient_in: int = 0
    salient_kept: int = 0

    @property
    def salient_survival(self) -> float:
        """``salient_kept / salient_in`` (1.0 before any rung-1 -> 2 demotion)."""
        return self.salient_kept / self.salient_in if self.salient_in else 1.0


class RawEvent(Protocol):
    """The part of a substrate ``Event`` that rehydration reads."""

    @property
    def ts(self) -> float: ...

    @property
    def agent(self) -> str: ...

    @property
    def content(self) -> Any: ...

    @property
    def attrs(self) -> Mapping[str, Any] | None: ...


def _ordered_union(groups: Sequence[Sequence[str]]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(item for group in groups for item in group))


def _addressee(speaker: str, participants: Sequence[str]) -> str:
    """Who "you" means: the other party of a two-person conversation, else unknown."""
    others = [p for p in participants if p != speaker]
    return others[0] if len(participants) == 2 and len(others) == 1 else ""


def _turns(records: Sequence[MemoryRecord], participants: Sequence[str]) -> list[Turn]:
    turns = []
    for record in records:
        ts = record.event_ts or record.first_event_ts
        for speaker, content in split_turns(record.text, record.speakers):
            turns.append(Turn(speaker, content, ts, _addressee(speaker, participants)))
    return turns


class Ladder:
    """Demotes records one rung at a time. Thread-safe; one per runtime is enough.

    Args:
        tokenizer: the runtime's token counter (sizes, budgets).
        embedder: embeds merged records and records reaching rung 3.
        config: ratios, episode rules, LLM batching (``MemoryConfig``).
        llm: used for rung 2 only when ``config.compression == "llm"``.
        guard: judges LLM output; None builds one with ``config.guard_keep_share``.
    """

    def __init__(
        self,
        *,
        tokenizer: Tokenizer,
        embedder: Embedder,
        config: MemoryConfig,
        llm: LLM | None = None,
        guard: Guard | None = None,
    ) -> None:
        self.tokenizer = tokenizer
        self.embedder = embedder
        self.config = config
        self.stats = LadderStats()
        self._lock = threading.Lock()
        self._compressor: BatchCompressor | None = None
        if llm is not None and config.compression == "llm":
            if guard is None:
                guard = Guard(GuardPolicy(keep_share=config.guard_keep_share), tokenizer)
            self._compressor = BatchCompressor(
                llm,
                guard,
                tokenizer,
                batch_records=config.llm_batch_records,
                batch_tokens=config.llm_batch_tokens,
                min_acceptance=config.llm_min_acceptance,
                probe_every=config.llm_probe_every,
                max_calls_per_event=config.llm_max_calls_per_event,
            )

    def demote(self, records: Sequence[MemoryRecord], *, now: float,
               perspective: Perspective = "whole") -> list[Demotion]:
        """Move every record exactly one rung down (0->1, 1->2, 2->3); never skip a rung.

        Rung 1 keeps what an agent with ``perspective`` values of the events (see
        :mod:`~solace.memory.ladder.extractive`); the rungs below are made from it.

        Records at rung 0 or 1 that belong to one episode (see
        :mod:`~solace.memory.ladder.episodes`) merge into one record. Each output
        record is new: ``rung`` = input rung + 1; ``record_id`` = min of its sources;
        ``entry_ids`` the sorted union; speakers and tags the ordered union;
        ``emotional_weight``, ``created``, ``last_referenced`` the max;
        ``references`` and ``source_tokens`` the sum; ``first_event_ts``/``event_ts``
        min/max; ``text``/``tokens`` the new form.

        Embeddings: a record reaching rung 2 is embedded from its rung-2 text — the
        summary long-term keeps it as (on LoCoMo, Main's evidence recall at 5 hits
        was 59.6 with these vectors, 53.7 with means of its turns); a merge at rung 1
        gets the :func:`mean_embedding` of its inputs' (no model call; the embedding
        of its text if an input has none); a rung-3 record keeps its input's (or gets
        one of its rung-2 text); a single record at rung 1 keeps its input's.
        Whatever must be embedded is embedded in one ``embed`` call.

        With an LLM configured, everything reaching rung 2 is compressed in batched
        calls; if the LLM raises or answers garbage, or the guard refuses a piece,
        the deterministic form is used and counted in :attr:`stats`.

        Args:
            records: records at rungs 0-2, distinct ``record_id``s.
            now: the caller's clock reading (the forms depend on event times only).

        Returns:
            Demotions in event-time order; every input record id appears in exactly
            one ``sources`` and every input entry id in exactly one output record.
            The inputs are not modified.

        Raises:
            ValueError: a record at rung 3 (or outside 0-3), or a repeated record_id.
            ModelError: the embedder cannot run (e.g. ``EmbedderLoadError``); nothing
                was changed and the call may be retried. LLM errors never escape.
        """
        if not math.isfinite(now):
            raise ValueError(f"now must be a finite clock reading, got {now!r}")
        seen: set[int] = set()
        for record in records:
            if record.rung not in (0, 1, 2):
                raise ValueError(
                    f"record {record.record_id} is at rung {record.rung!r}; only rungs 0-2 demote"
                )
            if record.record_id in seen:
                raise ValueError(f"record_id {record.record_id} appears twice in one demote call")
            seen.add(record.record_id)
        groups: list[list[MemoryRecord]] = []
        for rung in (0, 1):
            groups += group_episodes([r for r in records if r.rung == rung], self.config)
        groups += [[r] for r in sorted(records, key=lambda r: r.first_event_ts) if r.rung == 2]
        groups.sort(key=lambda g: (g[0].first_event_ts, g[0].record_id))

        texts = [self._form(group, records, perspective) for group in groups]
        survival = [(0, 0)] * len(groups)
        llm_counts = None
        to_rung2 = [i for i, g in enumerate(groups) if g[0].rung == 1]
        if self._compressor is not None and to_rung2:
            jobs = [
                CompressionJob(self._joined(groups[i]), texts[i], self._budget(groups[i], 2),
                               events=sum(len(r.entry_ids) for r in groups[i]))
                for i in to_rung2
            ]
            outputs, llm_counts = self._compressor.compress(jobs)
            for i, text in zip(to_rung2, outputs, strict=True):
                texts[i] = text
        for i in to_rung2:
            survival[i] = salient_survival(self._joined(groups[i]), texts[i])

        embeddings = self._embeddings(groups, texts)
        token_counts = self.tokenizer.count_many(texts)
        demotions = [
            Demotion(
                tuple(sorted(r.record_id for r in group)),
                self._merged(group, text, tokens, embedding),
                source,
            )
            for group, text, tokens, (embedding, source) in zip(
                groups, texts, token_counts, embeddings, strict=True
            )
        ]
        with self._lock:
            stats = self.stats
            for demotion in demotions:
                stats.demotions[demotion.record.rung] += 1
                stats.merges += len(demotion.sources) > 1
            stats.salient_in += sum(total for total, _ in survival)
            stats.salient_kept += sum(kept for _, kept in survival)
            if llm_counts is not None:
                stats.llm_calls += llm_counts.calls
                stats.llm_failures += llm_counts.failures
                stats.generated_tokens += llm_counts.generated_tokens
                stats.guard_accepted += llm_counts.accepted
                stats.guard_rejected += llm_counts.rejected
                stats.llm_too_long += llm_counts.too_long
                stats.llm_missing += llm_counts.missing
                stats.llm_reused += llm_counts.reused
                stats.llm_skipped += llm_counts.skipped
                stats.llm_over_budget += llm_counts.over_budget
        return demotions

    def _budget(self, group: Sequence[MemoryRecord], rung: int) -> int:
        source = sum(r.source_tokens for r in group)
        if rung == 1:
            return max(1, round(self.config.rung1_ratio * source))
        if rung == 2:
            return max(1, round(self.config.rung2_ratio * source))
        return max(self.config.rung3_min_tokens, round(self.config.rung3_ratio * source))

    @staticmethod
    def _joined(group: Sequence[MemoryRecord]) -> str:
        return "\n".join(r.text for r in group if r.text.strip())

    def _form(self, group: list[MemoryRecord], batch: Sequence[MemoryRecord],
              perspective: Perspective) -> str:
        """The deterministic form of ``group`` one rung down."""
        rung = group[0].rung
        speakers = _ordered_union([r.speakers for r in group])
        if rung == 0:
            participants = speakers
            if len(participants) < 2:  # a lone turn: its partner may be elsewhere in the batch
                near = _ordered_union([
                    r.speakers for r in batch
                    if r.agent == group[0].agent
                    and abs(r.first_event_ts - group[0].first_event_ts)
                    <= self.config.episode_gap_minutes * 60.0
                ])  # fmt: skip
                participants = near if len(near) == 2 else participants
            text = extract_key_points(_turns(group, participants), self._budget(group, 1),
                                      self.tokenizer, perspective)  # fmt: skip
        elif rung == 1:
            text = condense(self._joined(group), self._budget(group, 2), self.tokenizer, speakers)
        else:
            record = group[0]
            text = tag_line(
                record.text,
                speakers=record.speakers,
                tags=record.tags,
                first_event_ts=record.first_event_ts,
                budget_tokens=self._budget(group, 3),
                tokenizer=self.tokenizer,
            )
        return text if text.strip() else self._joined(group)

    def _embeddings(
        self, groups: Sequence[list[MemoryRecord]], texts: Sequence[str]
    ) -> list[tuple[np.ndarray | None, EmbeddingSource]]:
        """Each output's vector and where it came from; at most one ``embed`` call."""
        out: list[tuple[np.ndarray | None, EmbeddingSource]] = []
        wanted: list[tuple[int, str]] = []
        for index, (group, text) in enumerate(zip(groups, texts, strict=True)):
            parts = sorted(group, key=lambda r: r.record_id)
            if parts[0].rung == 1:  # see demote(): rung 2 is searched by its summary's vector
                out.append((None, "text"))
                wanted.append((index, text))
            elif len(parts) > 1 and all(r.embedding is not None for r in parts):
                parts_vectors = [r.embedding for r in parts if r.embedding is not None]
                out.append((mean_embedding(parts_vectors, [r.source_tokens for r in parts]),
                            "mean"))
            elif len(parts) > 1:
                out.append((None, "text"))
                wanted.append((index, text))
            elif parts[0].rung == 2 and parts[0].embedding is None:
                out.append((None, "kept"))  # the vector of the richer text it had
                wanted.append((index, parts[0].text))
            else:
                out.append((parts[0].embedding, "kept"))
        if wanted:
            vectors = self.embedder.embed([text for _, text in wanted])
            for (index, _), vector in zip(wanted, vectors, strict=True):
                out[index] = (np.asarray(vector, dtype=np.float32), out[index][1])
        return out

    def _merged(
        self, group: Sequence[MemoryRecord], text: str, tokens: int, embedding: np.ndarray | None
    ) -> MemoryRecord:
        first = group[0]
        return MemoryRecord(
            record_id=min(r.record_id for r in group),
            agent=first.agent,
            rung=first.rung + 1,
            text=text,
            tokens=tokens,
            source_tokens=sum(r.source_tokens for r in group),
            entry_ids=tuple(sorted({e for r in group for e in r.entry_ids})),
            kind=first.kind,
            speakers=_ordered_union([r.speakers for r in group]),
            first_event_ts=min(r.first_event_ts for r in group),
            event_ts=max(r.event_ts for r in group),
            created=max(r.created for r in group),
            last_referenced=max(r.last_referenced for r in group),
            references=sum(r.references for r in group),
            emotional_weight=max(r.emotional_weight for r in group),
            tags=_ordered_union([r.tags for r in group]),
            private=first.private,
            span=first.span if len(group) == 1 else (),
            embedding=embedding,
        )


def rehydrate_text(
    events: Sequence[RawEvent],
    rung: int,
    *,
    tokenizer: Tokenizer,
    config: MemoryConfig | None = None,
    perspective: Perspective = "whole",
) -> str:
    """The text a record standing for ``events`` would have at ``rung`` (0, 1 or 2),
    for an agent with ``perspective``.

    Rung 0 is one ``"Speaker: content"`` line per event (speaker from
    ``event.attrs["speaker"]``, else ``event.agent``); rungs 1 and 2 are the
    deterministic forms built from it, the events taken as one episode. Used by
    warm-up and by retrieval to inject a rung-3 hit.

    Raises:
        ValueError: ``rung`` is not 0, 1 or 2.
    """
    if rung not in (0, 1, 2):
        raise ValueError(f"rehydrate_text builds rungs 0, 1 or 2, not {rung!r}")
    config = config if config is not None else MemoryConfig()
    pairs = []
    for event in sorted(events, key=lambda e: e.ts):
        attrs = event.attrs or {}
        speaker = str(attrs.get("speaker") or event.agent)
        content = event.content if isinstance(event.content, str) else str(event.content)
        pairs.append((speaker, content, event.ts))
    raw = "\n".join(format_raw(speaker, content) for speaker, content, _ in pairs)
    if rung == 0 or not pairs:
        return raw
    participants = _ordered_union([[speaker for speaker, _, _ in pairs]])
    turns = [
        Turn(speaker, content, ts, _addressee(speaker, participants))
        for speaker, content, ts in pairs
    ]
    source = tokenizer.count(raw)
    text = extract_key_points(turns, max(1, round(config.rung1_ratio * source)), tokenizer,
                              perspective)
    if rung == 1:
        return text
    return condense(text, max(1, round(config.rung2_ratio * source)), tokenizer, participants)
