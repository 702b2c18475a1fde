"""CPython's cyclic garbage collector while a runtime opens, and while it runs.

Opening a home builds millions of long-lived objects (records, forms, index entries:
about a dozen an event). The collector runs a full collection each time the objects
that survived one grow by a quarter, and a full collection walks every tracked object:
at a million events the collections took about 2.3 s of a restart (to first recall
9.5-10.1 s with the collector on, 7.2-7.5 s with it off; ``benchmarks/scale_bench.py``
home, hashing embedder). :class:`OpeningPause` turns the collector off while a
runtime opens; once it is open, :meth:`OpeningPause.end` freezes every object then
alive (:func:`gc.freeze`: later collections skip them, so a recall never waits on a
walk of the whole memory) and turns the collector back on if it was on. The runtime
unfreezes them when it closes (:func:`thaw`), so a reference cycle among them that
became garbage meanwhile is collected then, not kept for the life of the process.

Closing writes every snapshot and kept form, building millions of short-lived objects
(a row a record, a list of its event ids): with the memory thawed, each collection
they set off walked all of it, and at a million events a close took 8.4 s. The close
runs :func:`paused` instead, and thaws after writing.

The collector is the process's: a host's own objects alive at that moment are frozen
with the runtime's, and thawed with them. Two runtimes opening at once in one process
only cost each other time (the first to finish turns the collector back on).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["OpeningPause", "paused", "thaw"]


class OpeningPause:
    """The collector off from construction to :meth:`end` (see the module docstring)."""

    def __init__(self) -> None:
        self._was_enabled = gc.isenabled()
        self._ended = False
        #: Whether :meth:`end` froze the objects (the runtime thaws them when it closes).
        self.froze = False
        gc.disable()

    def end(self, *, freeze: bool) -> None:
        """Turn the collector back on if it was on, first freezing every object alive
        when ``freeze`` (the runtime opened). Only the first call does anything."""
        if self._ended:
            return
        self._ended = True
        if freeze:
            gc.freeze()
            self.froze = True
        if self._was_enabled:
            gc.enable()


def thaw() -> None:
    """Let the collector walk the frozen objects again (a runtime closing)."""
    gc.unfreeze()


@contextmanager
def paused() -> Iterator[None]:
    """The collector off for the block, then back on if it was on (a close's writes):
    an :class:`OpeningPause` ended without freezing."""
    pause = OpeningPause()
    try:
        yield
    finally:
        pause.end(freeze=False)
