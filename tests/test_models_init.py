from __future__ import annotations

import subprocess
import sys

import solace.models


def test_all_names_are_exported() -> None:
    for name in solace.models.__all__:
        assert getattr(solace.models, name) is not None
    public = {n for n in vars(solace.models) if not n.startswith("_")}
    assert set(solace.models.__all__) == public - {"annotations"} - {
        "affect",
        "embedder",
        "embedding_cache",
        "entities",
        "factory",
        "guard",
        "llama_cpp",
        "llm",
        "onnx_embedder",
        "onnx_export",
        "openai_compat",
        "remembered",
        "schema",
        "tokenizer",
    }


def test_import_is_light() -> None:
    """Importing the package loads no model library; backends load them lazily."""
    code = (
        "import sys, solace.models; "
        "heavy = {'torch', 'sentence_transformers', 'llama_cpp', 'tokenizers'}; "
        "print(sorted(heavy & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
