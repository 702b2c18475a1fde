"""The application calls behind ``solace import``.

:meth:`ImportCalls.import_items` runs :func:`solace.importing.import_batches` on the
runtime (``solace import`` with no process holding the home: its own runtime on a
replayed clock); :meth:`ImportCalls.import_batches` checks JSON items first (``POST
/import``: ``solace import`` while a process serves the home). Either way: the same
keys (a line the home holds is skipped, so a re-run finishes an import cut short and
adds nothing twice), one atomic write a batch, each batch distilled into facts and the
workspace. One difference: a serving runtime keeps its own clock, so the fade sees the
imported lines as old as their dates say at once, instead of living through them on a
replayed clock.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any

from solace.app.api import AppError, Solace
from solace.importing import IMPORT_KEY, ImportItem
from solace.validation import InvalidObservationError, check_observation

__all__ = ["ImportCalls", "ImportSummary", "MAX_IMPORT_KEY_CHARS"]

#: The longest import key accepted (a LoCoMo key is ``locomo:<sample>:<dia id>``).
MAX_IMPORT_KEY_CHARS = 512


@dataclass(frozen=True, slots=True)
class ImportSummary:
    """What one call did: events written, and items skipped as already held."""

    written: int
    skipped: int


class ImportCalls:
    """Imports into the runtime ``app`` runs (see the module docstring)."""

    def __init__(self, app: Solace) -> None:
        self.app = app

    async def import_batches(self, batches: Sequence[Sequence[Mapping[str, Any]]]
                             ) -> ImportSummary:
        """Import ``batches`` of items (``key``, ``speaker``, ``text``, ``at`` epoch
        seconds, ``attrs`` optional), each batch one atomic write.

        Raises:
            AppError: an item that is not importable, naming its batch, index and the
                problem; nothing is written then.
        """
        checked = [[_item(raw, b, i) for i, raw in enumerate(batch)]
                   for b, batch in enumerate(batches)]
        skipped = 0

        def on_skipped(n: int) -> None:
            nonlocal skipped
            skipped = n

        written = 0
        async with aclosing(self.import_items(checked, on_skipped=on_skipped)) as per_batch:
            async for n in per_batch:
                written += n
        return ImportSummary(written, skipped)

    def import_items(self, batches: Sequence[Sequence[ImportItem]], *,
                     on_skipped: Callable[[int], None] = lambda n: None
                     ) -> AsyncGenerator[int, None]:
        """Import checked items (``solace import`` reads and checks its whole file first),
        yielding the events written for each batch once it is written, delivered,
        settled and distilled (:func:`solace.importing.import_batches`)."""
        from solace.importing import import_batches

        return import_batches(self.app.runtime, batches, on_skipped=on_skipped)


def _item(raw: Mapping[str, Any], batch: int, index: int) -> ImportItem:
    where = f"batch {batch} item {index}"
    key = raw.get("key")
    if not isinstance(key, str) or not key.strip() or len(key) > MAX_IMPORT_KEY_CHARS:
        raise AppError(f"{where}: key must be a non-blank string of at most "
                       f"{MAX_IMPORT_KEY_CHARS} characters, got {key!r:.80}")
    attrs = dict(raw.get("attrs") or {})
    if IMPORT_KEY in attrs:
        raise AppError(f"{where}: attrs may not hold {IMPORT_KEY!r} (the key is the item's)")
    try:
        ok = check_observation(raw.get("text"), speaker=raw.get("speaker"), kind="message",
                               at=raw.get("at"), attrs=attrs, emotional_weight=None, tags=(),
                               kinds=("message",))
    except InvalidObservationError as exc:
        raise AppError(f"{where}: {exc}") from None
    if ok.ts is None or ok.speaker is None:
        raise AppError(f"{where}: speaker and at (epoch seconds) are required")
    return ImportItem(key, ok.speaker, ok.text, ok.ts,
                      tuple(sorted((ok.attrs or {}).items())))
