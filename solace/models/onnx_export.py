"""Export MiniLM to an ONNX graph once, quantise it if asked, and cache it on disk.

:class:`solace.models.onnx_embedder.OnnxMiniLMEmbedder` runs all-MiniLM-L6-v2 through
ONNX Runtime. Its graph is built here from the same local safetensors model the
torch embedder loads (never from the network): torch's TorchScript exporter writes
the float32 graph (the transformer up to its last hidden state; pooling and
normalisation stay in numpy), and the ``int8`` variant is then passed through ONNX
Runtime's pre-processing and ``quantize_dynamic`` (int8 weights, one scale per output
channel, MatMul only, the embedding tables kept in float32).

The cache file's name is a hash of the model files (``config.json`` and the weights),
the variant and :data:`RECIPE`, so a changed model or recipe never reuses an old
graph. Files are written to a temporary name in the cache directory, fsynced and
renamed: a reader, or a second process building the same file at the same time,
sees a whole file or none. Building is blocking CPU work (a few seconds).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from solace.models.embedder import offline_hub
from solace.models.llm import EmbedderLoadError

__all__ = ["RECIPE", "VARIANTS", "Variant", "build_graph", "cache_file", "default_cache_dir"]

Variant = Literal["fp32", "int8"]
VARIANTS: tuple[Variant, ...] = ("fp32", "int8")
RECIPE = "minilm-onnx-1"  # bump when the export or quantisation steps change
OPSET = 17
_WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")

_hash_lock = threading.Lock()
_hashes: dict[tuple[Path, int, int], str] = {}


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/solace/embedders``, else ``~/.cache/solace/embedders``."""
    base = os.environ.get("XDG_CACHE_HOME")
    root = Path(base) if base else Path.home() / ".cache"
    return root / "solace" / "embedders"


def _file_digest(path: Path) -> str:
    """sha256 of one file, memoised per process on (path, size, mtime)."""
    st = path.stat()
    key = (path, st.st_size, st.st_mtime_ns)
    with _hash_lock:
        if key in _hashes:
            return _hashes[key]
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    value = digest.hexdigest()
    with _hash_lock:
        _hashes[key] = value
    return value


def cache_file(model_dir: Path, variant: Variant, cache_dir: Path) -> Path:
    """The cache path of ``model_dir``'s graph in ``variant``.

    Returns:
        ``cache_dir/minilm-<variant>-<hash>.onnx``; the hash covers the contents of
        ``config.json`` and the weight file, the variant and :data:`RECIPE`.

    Raises:
        ValueError: ``variant`` is not one of :data:`VARIANTS`.
        EmbedderLoadError: ``model_dir`` has no ``config.json`` or no weight file.
    """
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    config = model_dir / "config.json"
    weights = next((model_dir / n for n in _WEIGHT_FILES if (model_dir / n).is_file()), None)
    if not config.is_file() or weights is None:
        raise EmbedderLoadError(
            f"no transformer model at {model_dir}: need config.json and one of {_WEIGHT_FILES}"
        )
    digest = hashlib.sha256(f"{RECIPE}\0{variant}\0".encode())
    for file in (config, weights):
        digest.update(f"{file.name}\0{_file_digest(file)}\0".encode())
    return cache_dir / f"minilm-{variant}-{digest.hexdigest()[:20]}.onnx"


@contextlib.contextmanager
def _temp_path(directory: Path, stem: str) -> Iterator[Path]:
    """A fresh temporary file name in ``directory``, removed on exit if still there."""
    fd, name = tempfile.mkstemp(dir=directory, prefix=f".{stem}.", suffix=".tmp")
    os.close(fd)
    path = Path(name)
    try:
        yield path
    finally:
        path.unlink(missing_ok=True)


def _publish(tmp: Path, final: Path) -> None:
    """fsync ``tmp``, rename it over ``final`` and fsync the directory."""
    with tmp.open("rb") as fh:
        os.fsync(fh.fileno())
    os.replace(tmp, final)
    dir_fd = os.open(final.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def _export_fp32(model_dir: Path, out: Path) -> None:
    """Write the float32 graph (input ids, mask, type ids -> last hidden state) to ``out``."""
    offline_hub()
    try:
        import onnx  # noqa: F401  (torch's exporter needs it)
        import torch
        from transformers import AutoModel
    except ImportError as exc:
        raise EmbedderLoadError(
            f"exporting {model_dir} to ONNX needs torch, transformers and onnx ({exc}); "
            "`pip install solace`"
        ) from exc

    class _Encoder(torch.nn.Module):
        def __init__(self, model: Any) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    try:
        # eager attention: the traced graph then keeps the mask arithmetic for any
        # padding (sdpa's fast paths branch in Python on the example's mask).
        model = AutoModel.from_pretrained(
            str(model_dir), local_files_only=True, attn_implementation="eager"
        ).eval()
        ids = torch.tensor([[101, 7592, 2088, 102], [101, 7592, 102, 0]], dtype=torch.long)
        mask = (ids != 0).to(torch.long)
        names = ["input_ids", "attention_mask", "token_type_ids"]
        axes = {n: {0: "batch", 1: "sequence"} for n in [*names, "last_hidden_state"]}
        with torch.no_grad(), warnings.catch_warnings():
            # the TorchScript exporter is deprecated and its tracer warns about
            # Python branches it folds; both are expected here, and the result is
            # checked against sentence-transformers by the tests.
            warnings.simplefilter("ignore")
            torch.onnx.export(
                _Encoder(model),
                (ids, mask, torch.zeros_like(ids)),
                str(out),
                input_names=names,
                output_names=["last_hidden_state"],
                dynamic_axes=axes,
                opset_version=OPSET,
                do_constant_folding=True,
                dynamo=False,
            )
    except EmbedderLoadError:
        raise
    except Exception as exc:  # torch, transformers and onnx raise many types
        raise EmbedderLoadError(f"cannot export {model_dir} to ONNX: {exc}") from exc


def _quantise(src: Path, out: Path, scratch: Path) -> None:
    """Pre-process ``src`` and write its int8 dynamically quantised graph to ``out``."""
    try:
        from onnxruntime.quantization import QuantType, quantize_dynamic
        from onnxruntime.quantization.shape_inference import quant_pre_process
    except ImportError as exc:
        raise EmbedderLoadError(
            f"quantising needs onnxruntime and onnx ({exc}); `pip install onnxruntime onnx`"
        ) from exc
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # symbolic shape inference cannot finish on this graph; ONNX's own
            # shape inference and ORT's optimisation still run.
            quant_pre_process(str(src), str(scratch), skip_symbolic_shape=True)
            quantize_dynamic(
                str(scratch),
                str(out),
                weight_type=QuantType.QInt8,
                per_channel=True,
                op_types_to_quantize=["MatMul"],
            )
    except Exception as exc:  # onnxruntime raises bare Exception and its own types
        raise EmbedderLoadError(f"cannot quantise the ONNX graph of {src}: {exc}") from exc


def build_graph(model_dir: Path, variant: Variant, target: Path) -> None:
    """Build ``model_dir``'s graph in ``variant`` and publish it atomically at ``target``.

    An existing ``target`` is replaced. Two processes building the same target at
    once both succeed; the last rename wins and either file is whole.

    Raises:
        ValueError: ``variant`` is not one of :data:`VARIANTS`.
        EmbedderLoadError: the cache directory cannot be written, a dependency is
            missing, or the export or quantisation fails (the message names which).
    """
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    directory = target.parent
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with contextlib.ExitStack() as stack:
            fp32 = stack.enter_context(_temp_path(directory, target.name))
            _export_fp32(model_dir, fp32)
            if variant == "fp32":
                _publish(fp32, target)
                return
            scratch = stack.enter_context(_temp_path(directory, target.name))
            int8 = stack.enter_context(_temp_path(directory, target.name))
            _quantise(fp32, int8, scratch)
            _publish(int8, target)
    except OSError as exc:
        raise EmbedderLoadError(f"cannot write the ONNX cache at {directory}: {exc}") from exc
