"""Handing memory the process has freed back to the operating system.

CPython frees through the C allocator, and glibc's ``malloc`` keeps what is freed for
later use rather than returning it: resident memory stays at its high-water mark. A
long-lived runtime frees hundreds of megabytes at a time (deriving an agent's retrieval
forms, reading the kept ones at a restart, snapshots, fades): at 183k events,
re-deriving the forms left 341 MB free but resident, a third of the process.
``malloc_trim(0)`` returns those pages; the runtime calls it after opening and every
``runtime.release_heap_seconds`` (60 by default) in a worker thread. It walks the heap
holding the allocator's lock, about 0.1 s per GB here, so a thread that allocates
meanwhile (the event loop) can wait that long, once a minute. In the million-event run
it took resident memory beyond the models from 2.34 to 2.01 KB an event. Where the C
library has no ``malloc_trim`` (musl, macOS) nothing is done.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable

__all__ = ["release_free_heap"]


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    try:
        libc = ctypes.CDLL(None)  # the symbols the process already has: its C library
    except OSError:
        return None
    trim = getattr(libc, "malloc_trim", None)
    if trim is None:
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim  # type: ignore[no-any-return]


def release_free_heap() -> bool:
    """Return the free pages ``malloc`` holds to the operating system; whether any
    were. Blocking (it walks the heap: ~0.1 s per GB), and it releases the GIL: call
    it from a worker thread."""
    trim = _malloc_trim()
    return bool(trim(0)) if trim is not None else False
