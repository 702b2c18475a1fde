"""The runtime's embedding cache: one model call per distinct text, even across threads."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
import pytest

from solace.models import HashingEmbedder
from solace.models.embedding_cache import SharedEmbedder


class SlowEmbedder:
    """HashingEmbedder that records every text it embeds and can be held mid-call."""

    def __init__(self) -> None:
        self.inner = HashingEmbedder()
        self.name, self.dim = self.inner.name, self.inner.dim
        self.seen: list[str] = []
        self.entered = threading.Event()
        self.release = threading.Event()
        self.release.set()
        self.failures = 0  # the next this many calls raise

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.seen.extend(texts)
        self.entered.set()
        self.release.wait(5)
        if self.failures:
            self.failures -= 1
            raise RuntimeError("model down")
        return self.inner.embed(texts)


def test_a_repeated_text_is_embedded_once_and_returned_as_the_model_made_it() -> None:
    model = SlowEmbedder()
    shared = SharedEmbedder(model)
    first = shared.embed(["Caroline: hi", "Melanie: hello", "Caroline: hi"])
    again = shared.embed(["Melanie: hello"])
    assert model.seen == ["Caroline: hi", "Melanie: hello"]
    np.testing.assert_array_equal(first[1], again[0])
    np.testing.assert_array_equal(first[0], model.inner.embed(["Caroline: hi"])[0])
    assert (shared.misses, shared.hits) == (2, 2)
    assert shared.embed([]).shape == (0, model.dim)


def test_a_text_another_thread_is_embedding_is_waited_for_not_embedded_twice() -> None:
    model = SlowEmbedder()
    model.release.clear()
    shared = SharedEmbedder(model)
    out: dict[str, np.ndarray] = {}
    first = threading.Thread(target=lambda: out.update(a=shared.embed(["x", "y"])))
    first.start()
    assert model.entered.wait(5)
    second = threading.Thread(target=lambda: out.update(b=shared.embed(["y", "z"])))
    second.start()
    second.join(0.2)
    model.release.set()
    first.join(5)
    second.join(5)
    assert sorted(model.seen) == ["x", "y", "z"]  # "y" once
    np.testing.assert_array_equal(out["a"][1], out["b"][0])


def test_when_the_embedding_thread_fails_a_waiting_thread_embeds_for_itself() -> None:
    model = SlowEmbedder()
    model.release.clear()
    model.failures = 1
    shared = SharedEmbedder(model)
    errors: list[BaseException] = []
    out: dict[str, np.ndarray] = {}

    def failing() -> None:
        try:
            shared.embed(["x"])
        except RuntimeError as exc:
            errors.append(exc)

    first = threading.Thread(target=failing)
    first.start()
    assert model.entered.wait(5)
    second = threading.Thread(target=lambda: out.update(b=shared.embed(["x"])))
    second.start()
    second.join(0.2)
    model.release.set()
    first.join(5)
    second.join(5)
    assert len(errors) == 1 and out["b"].shape == (1, model.dim)
    assert model.seen == ["x", "x"]  # the failed call, then the waiter's own
    model.failures = 1
    with pytest.raises(RuntimeError):
        shared.embed(["new"])
    assert shared.embed(["new"]).shape == (1, model.dim)  # nothing left in flight
