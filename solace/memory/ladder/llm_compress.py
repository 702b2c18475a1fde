"""Rung 2 by an LLM, when configured: batched, guarded, with a deterministic fallback.

A small local model writes ~30 tokens/s and a hosted one costs money per call, so
one call compresses many records (everything crossing to rung 2 in one fade pass,
in chunks of ``llm_batch_records`` / ``llm_batch_tokens``). The answer is split back
per record and every piece passes the guard: shorter than its source, keeping its
names, numbers and dates, inventing none — and no longer than the size the rung
allows. A failed call, a malformed answer, a missing piece or a rejected one gets
the deterministic form, which is always computed first. So a model can only make
memory better or leave it as it would have been.

Three things bound the cost. Calls are budgeted: at most ``max_calls_per_event``
calls per event the compressed records stand for, counted from the start (a batch
that would go over gets the deterministic forms) — an agent with a small budget
fades a record or two per pass, which would otherwise cost a call each. A job
already judged (the same rung-1 text and budget: two agents fading the same
episode) reuses its verdict instead of calling again. And a model whose pieces the
guard keeps refusing is benched: once the share accepted among the last
``_WINDOW`` pieces falls below ``min_acceptance``, only one batch in
``probe_every`` goes to the model (a probe), the rest get the deterministic form at
once; probes that pass bring it back. Measured on LoCoMo, SmolLM2-135M had 1
of 218 pieces accepted, at ~21 s a call.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict, deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from solace.models.guard import Guard
from solace.models.llm import LLM, ChatMessage, ModelError
from solace.models.schema import SchemaError, validate
from solace.models.tokenizer import Tokenizer

__all__ = ["BatchCompressor", "CompressionCounts", "CompressionJob", "summaries_schema"]

log = logging.getLogger(__name__)

# An LLM summary may exceed the rung's budget (or the deterministic form, if
# longer) by this factor before it is refused as too long.
_SIZE_SLACK = 1.5
# Generation is capped near the accepted size: a small model tends to ramble until
# the cap, and on two cores every generated token costs ~30-130 ms. A summary may
# have ``_CHARS_PER_TOKEN`` characters per budget token (~4.3 make a WordPiece token
# in chat English), and ``max_tokens`` must let every summary reach that length even
# in a model whose tokens are short (~3 characters), or the JSON is cut off.
_CHARS_PER_TOKEN = 4.5 * _SIZE_SLACK
_MODEL_CHARS_PER_TOKEN = 3.0
_JSON_TOKENS_PER_ITEM = 16  # {"id": n, "summary": "..."}, in any BPE
_WINDOW = 24  # the guard's latest verdicts that decide whether the model is benched
_MEMO_SIZE = 4096  # judged jobs remembered


@dataclass(frozen=True, slots=True)
class CompressionJob:
    """One record to bring to rung 2.

    Attributes:
        source: its rung-1 text (what the model summarises and the guard checks against).
        fallback: its deterministic rung-2 form.
        budget_tokens: the rung-2 size target.
        events: how many events the record stands for (the call budget counts them).
    """

    source: str
    fallback: str
    budget_tokens: int
    events: int = 1


@dataclass(slots=True)
class CompressionCounts:
    """What one :meth:`BatchCompressor.compress` call did."""

    calls: int = 0
    failures: int = 0  # calls that raised or whose answer was not the schema
    generated_tokens: int = 0
    accepted: int = 0
    rejected: int = 0  # pieces the guard refused
    too_long: int = 0  # pieces the guard passed but the rung's size limit refused
    missing: int = 0  # records the answer left out
    reused: int = 0  # jobs answered by an earlier verdict on the same text (no call)
    skipped: int = 0  # jobs given the deterministic form while the model was benched
    over_budget: int = 0  # jobs given the deterministic form to stay within the call budget


def summaries_schema(count: int, max_chars: int) -> dict[str, Any]:
    """The JSON schema of an answer for ``count`` records (ids 1..count)."""
    return {
        "type": "object",
        "properties": {
            "summaries": {
                "type": "array",
                "maxItems": count,
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "integer", "minimum": 1, "maximum": count},
                        "summary": {"type": "string", "minLength": 1, "maxLength": max_chars},
                    },
                    "required": ["id", "summary"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["summaries"],
        "additionalProperties": False,
    }


_SYSTEM = (
    "You shorten memory notes. Keep every name, number and date exactly as written. "
    "Say who did what. Never add anything that is not in the note."
)


def _messages(jobs: Sequence[CompressionJob]) -> list[ChatMessage]:
    notes = "\n\n".join(
        f"Note {i} (at most {max(8, job.budget_tokens * 3 // 4)} words):\n{job.source}"
        for i, job in enumerate(jobs, start=1)
    )
    user = (
        f"Shorten each of these {len(jobs)} notes. Answer with JSON: "
        '{"summaries": [{"id": <note number>, "summary": "<short note>"}]}\n\n' + notes
    )
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": user}]


class BatchCompressor:
    """Compresses rung-1 texts to rung 2 with an LLM, in batches, through a guard.

    Args:
        llm: the model; any :class:`~solace.models.llm.LLM`.
        guard: judges every piece against its source.
        tokenizer: the runtime's token counter (sizes and batching).
        batch_records: most records per call.
        batch_tokens: most source tokens per call (a single larger record still
            goes alone).
        min_acceptance: bench the model when fewer than this share of its latest
            pieces passed (0 never benches).
        probe_every: while benched, one batch in this many still goes to the model.
        max_calls_per_event: the call budget (0 means none).
    """

    def __init__(
        self,
        llm: LLM,
        guard: Guard,
        tokenizer: Tokenizer,
        *,
        batch_records: int,
        batch_tokens: int,
        min_acceptance: float = 0.0,
        probe_every: int = 10,
        max_calls_per_event: float = 0.0,
    ) -> None:
        if batch_records < 1 or batch_tokens < 1 or probe_every < 1:
            raise ValueError(
                f"batch_records, batch_tokens and probe_every must be >= 1, got "
                f"{batch_records!r}, {batch_tokens!r}, {probe_every!r}"
            )
        if not 0.0 <= min_acceptance <= 1.0:
            raise ValueError(f"min_acceptance must be within [0, 1], got {min_acceptance!r}")
        if not max_calls_per_event >= 0.0:
            raise ValueError(f"max_calls_per_event must be >= 0, got {max_calls_per_event!r}")
        self.llm = llm
        self.guard = guard
        self.tokenizer = tokenizer
        self.batch_records = batch_records
        self.batch_tokens = batch_tokens
        self.min_acceptance = min_acceptance
        self.probe_every = probe_every
        self.max_calls_per_event = max_calls_per_event
        # One compression at a time: the model runs one call at a time anyway, and a
        # second agent must see the first one's verdicts on the same jobs.
        self._lock = threading.Lock()
        self._memo: OrderedDict[tuple[str, int], str | None] = OrderedDict()
        self._verdicts: deque[bool] = deque(maxlen=_WINDOW)
        self._benched_batches = 0
        self._events = 0  # events of every job not answered from the memo
        self._calls = 0

    @property
    def benched(self) -> bool:
        """Whether the guard's latest verdicts have benched the model."""
        window = self._verdicts
        return len(window) == window.maxlen and sum(window) < self.min_acceptance * len(window)

    def _batches(self, jobs: Sequence[CompressionJob]) -> list[list[int]]:
        sizes = self.tokenizer.count_many([job.source for job in jobs])
        batches: list[list[int]] = []
        used = 0
        for index, size in enumerate(sizes):
            full = batches and (
                len(batches[-1]) >= self.batch_records or used + size > self.batch_tokens
            )
            if not batches or full:
                batches.append([])
                used = 0
            batches[-1].append(index)
            used += size
        return batches

    def compress(self, jobs: Sequence[CompressionJob]) -> tuple[list[str], CompressionCounts]:
        """Rung-2 texts for ``jobs``, in order, and what it took.

        Guarantees: one text per job, never empty unless its fallback is; each is
        either a guard-accepted LLM piece within the size limit or the job's
        fallback. Exceptions from the model are caught and counted (memory must
        not depend on a model behaving); nothing else is.
        """
        counts = CompressionCounts()
        texts = [job.fallback for job in jobs]
        with self._lock:
            fresh: list[int] = []
            for index, job in enumerate(jobs):
                key = (job.source, job.budget_tokens)
                if key in self._memo:
                    counts.reused += 1
                    texts[index] = self._memo[key] or job.fallback
                else:
                    fresh.append(index)
                    self._events += job.events
            for batch in self._batches([jobs[i] for i in fresh]):
                indices = [fresh[i] for i in batch]
                if self._over_budget():
                    counts.over_budget += len(indices)
                    continue
                if self._bench_this_batch():
                    counts.skipped += len(indices)
                    continue
                self._calls += 1
                pieces = self._judged([jobs[i] for i in indices], counts)
                for index, piece in zip(indices, pieces or [None] * len(indices), strict=True):
                    if pieces is not None:  # a failed call is not a verdict worth reusing
                        self._remember(jobs[index], piece)
                    if piece is not None:
                        texts[index] = piece
        return texts, counts

    def _over_budget(self) -> bool:
        # The first call is always allowed; after it, calls <= budget x events.
        limit = self.max_calls_per_event * self._events
        return self.max_calls_per_event > 0 and self._calls > 0 and self._calls + 1 > limit

    def _bench_this_batch(self) -> bool:
        if not self.benched:
            self._benched_batches = 0
            return False
        self._benched_batches += 1
        return self._benched_batches % self.probe_every != 0  # every probe_every-th: a probe

    def _judged(self, jobs: list[CompressionJob],
                counts: CompressionCounts) -> list[str | None] | None:
        """One call for ``jobs``: each accepted piece or None (use the fallback); None
        for all of them if the call failed. Every job is a verdict for :attr:`benched`."""
        answer = self._call(jobs, counts)
        if answer is None:
            self._verdicts.extend([False] * len(jobs))
            return None
        pieces: list[str | None] = []
        for position, job in enumerate(jobs, start=1):
            piece = answer.get(position)
            if piece is None:
                counts.missing += 1
            elif not self.guard.check(job.source, piece).ok:
                counts.rejected += 1
                piece = None
            else:
                limit = max(job.budget_tokens, self.tokenizer.count(job.fallback)) * _SIZE_SLACK
                if self.tokenizer.count(piece) > limit:
                    counts.too_long += 1
                    piece = None
                else:
                    counts.accepted += 1
                    piece = piece.strip()
            self._verdicts.append(piece is not None)
            pieces.append(piece)
        return pieces

    def _remember(self, job: CompressionJob, piece: str | None) -> None:
        self._memo[(job.source, job.budget_tokens)] = piece
        while len(self._memo) > _MEMO_SIZE:
            self._memo.popitem(last=False)

    def _call(self, jobs: list[CompressionJob], counts: CompressionCounts) -> dict[int, str] | None:
        """One LLM call; the answer as {note number: summary}, or None on failure."""
        longest = int(max(j.budget_tokens for j in jobs) * _CHARS_PER_TOKEN)
        schema = summaries_schema(len(jobs), longest)
        per_item = longest / _MODEL_CHARS_PER_TOKEN + _JSON_TOKENS_PER_ITEM
        max_tokens = int(per_item * len(jobs)) + 8
        stats = getattr(self.llm, "stats", None)
        generated_before = getattr(stats, "generated_tokens", 0)
        counts.calls += 1
        try:
            obj = self.llm.complete_json(_messages(jobs), schema, max_tokens=max_tokens)
        except ModelError as exc:
            counts.failures += 1
            log.info("LLM compression failed, deterministic forms used: %s", exc)
            return None
        except Exception as exc:  # a third-party backend's own error: still only a model
            counts.failures += 1
            log.warning("LLM backend %r raised %r; deterministic forms used", self.llm, exc)
            return None
        finally:
            counts.generated_tokens += max(
                0, getattr(stats, "generated_tokens", 0) - generated_before
            )
        try:
            validate(obj, schema)  # backends validate too; a fake or a bug may not
        except SchemaError as exc:
            counts.failures += 1
            log.info("LLM compression answer fails the schema, deterministic forms used: %s", exc)
            return None
        answer: dict[int, str] = {}
        for item in obj["summaries"]:
            answer.setdefault(item["id"], item["summary"])  # a repeated id: the first wins
        return answer
