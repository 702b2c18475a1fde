"""Pure functions of a short text, remembered: what every agent asks of one event is
worked out once.

Five agents perceive each event and four compress each episode, so the same turns and
sentences reach the same pure helpers (salient items, resolved key points, token
counts) several times within seconds. A text longer than :data:`SHORT_TEXT_CHARS` is
worked out every time and never held, so a huge paste cannot pin memory.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Concatenate, ParamSpec, TypeVar

__all__ = ["SHORT_TEXT_CHARS", "remembered"]

#: The longest text (characters) a remembered function keeps a result for.
SHORT_TEXT_CHARS = 2000

P = ParamSpec("P")
R = TypeVar("R")


def remembered(
    size: int,
) -> Callable[[Callable[Concatenate[str, P], R]], Callable[Concatenate[str, P], R]]:
    """Decorate a pure function of ``(text, *hashable args)`` to keep its last ``size``
    results for texts of at most :data:`SHORT_TEXT_CHARS` characters (thread-safe)."""

    def wrap(fn: Callable[Concatenate[str, P], R]) -> Callable[Concatenate[str, P], R]:
        kept = functools.lru_cache(maxsize=size)(fn)

        @functools.wraps(fn)
        def call(text: str, /, *args: P.args, **kwargs: P.kwargs) -> R:
            if len(text) > SHORT_TEXT_CHARS:
                return fn(text, *args, **kwargs)
            return kept(text, *args, **kwargs)  # type: ignore[arg-type]

        call.cache_info = kept.cache_info  # type: ignore[attr-defined]
        return call

    return wrap
