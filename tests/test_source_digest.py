"""The source digest that stamps derived caches covers what the derivation can reach, and
only that (solace.source_digest; the retrieval forms' fingerprint uses it)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from solace.memory.retrieval_forms import FORMS_SOURCES, STAMPED_BY_VALUE, fingerprint
from solace.source_digest import (
    SOURCE_ROOT,
    _digest,
    _path_of,
    _tree,
    source_closure,
    source_digest,
)


def make_package(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


PKG = {
    "pkg/__init__.py": "from pkg.derive import derive\nfrom pkg.surface import serve\n",
    "pkg/derive.py": "from .text import clean\n\ndef derive(x):\n    from pkg.deep import late\n"
                     "    return late(clean(x))\n",
    "pkg/text.py": "import re\nimport numpy\n",
    "pkg/deep.py": "def late(x):\n    return x\n",
    "pkg/surface.py": "from pkg import derive\n",
    "pkg/user.py": "from pkg import derive\n",
}


def closure(root: Path, *entries: str) -> list[str]:
    return source_closure(entries, root=root, packages=("pkg",))


def test_closure_follows_absolute_relative_and_function_local_imports(tmp_path: Path) -> None:
    root = make_package(tmp_path, PKG)
    assert closure(root, "pkg.derive") == ["pkg.deep", "pkg.derive", "pkg.text"]


def test_a_name_reexported_by_a_package_init_reaches_only_its_defining_module(
    tmp_path: Path,
) -> None:
    root = make_package(tmp_path, PKG)
    # ``from pkg import derive`` goes to pkg.derive, not to pkg/__init__ (which would pull
    # in pkg.surface too)
    assert closure(root, "pkg.user") == ["pkg.deep", "pkg.derive", "pkg.text", "pkg.user"]


def test_a_name_a_package_init_defines_itself_keeps_the_whole_init(tmp_path: Path) -> None:
    root = make_package(tmp_path, {**PKG, "pkg/__init__.py": "from pkg.surface import serve\n"
                                   "def helper():\n    pass\n",
                                   "pkg/user.py": "from pkg import helper\n"})
    assert closure(root, "pkg.user") == ["pkg", "pkg.deep", "pkg.derive", "pkg.surface",
                                         "pkg.text", "pkg.user"]


def test_a_skipped_module_is_neither_digested_nor_followed(tmp_path: Path) -> None:
    root = make_package(tmp_path, PKG)
    assert source_closure(["pkg.derive"], root=root, packages=("pkg",),
                          skip=["pkg.text"]) == ["pkg.deep", "pkg.derive"]

    def digest(skip: list[str]) -> bytes:
        _digest.cache_clear()
        _tree.cache_clear()
        return source_digest(["pkg.derive"], root=root, packages=("pkg",), skip=skip)

    before, skipped = digest([]), digest(["pkg.text"])
    (root / "pkg/text.py").write_text("import re\nLIMIT = 3\n")
    assert digest(["pkg.text"]) == skipped and digest([]) != before


def test_the_digest_changes_with_a_reached_modules_code_and_not_with_anything_else(
    tmp_path: Path,
) -> None:
    root = make_package(tmp_path, PKG)

    def digest() -> bytes:  # a new process: the files are read again
        _digest.cache_clear()
        _tree.cache_clear()
        return source_digest(["pkg.derive"], root=root, packages=("pkg",))

    before = digest()
    (root / "pkg/surface.py").write_text("from pkg import derive\nPORT = 8765\n")
    assert digest() == before
    (root / "pkg/deep.py").write_text('def late(x):\n    """Say why."""  # and a comment\n'
                                      "\n    return x\n")
    assert digest() == before  # a docstring, a comment, a blank line: same code
    (root / "pkg/deep.py").write_text("def late(x):\n    return x.strip()\n")
    assert digest() != before


def test_an_entry_that_is_not_a_module_is_refused_naming_it(tmp_path: Path) -> None:
    root = make_package(tmp_path, PKG)
    with pytest.raises(ValueError, match="'pkg.nowhere' is not a module"):
        closure(root, "pkg.nowhere")


def test_the_forms_stamp_covers_their_derivation_and_not_scoring_ordering_or_surfaces() -> None:
    reached = set(source_closure(FORMS_SOURCES, skip=STAMPED_BY_VALUE))
    assert {"solace.memory.ladder.extractive", "solace.memory.lexical", "solace.retrieval_texts",
            "solace.memory.chunks", "solace.conversation.events", "solace.memory.form_derivation",
            "solace.memory.ladder.ladder"} <= reached
    # how hits are scored and ordered may change without deriving a home's forms again
    assert not reached & {"solace.memory.candidates", "solace.memory.retrieval",
                          "solace.actors.routing", "solace.recall_order",
                          "solace.memory.hit_merge", "solace.memory.event_vectors",
                          "solace.memory.retrieval_forms",
                          "solace.config.schema"}  # a new config key: the forms are kept
    assert not {m for m in reached if m.startswith(("solace.surfaces", "solace.surfaces.cli",
                                                     "solace.facts", "solace.workspace"))}
    other = "solace.models.onnx_embedder"  # a module the forms do not reach by themselves
    assert other not in reached
    assert fingerprint("config", sources=[other]) != fingerprint("config", sources=[])
    # a tokenizer from another package is left out, not refused
    assert fingerprint("config", sources=["tokenizers.models"]) == fingerprint("config")


def test_no_module_the_forms_stamp_reaches_imports_by_name_at_run_time() -> None:
    """The digest reads imports statically; code reached through importlib would be
    missed, so none of the stamped modules may use it."""
    for name in source_closure([*FORMS_SOURCES, "solace.models.tokenizer"]):
        path = _path_of(SOURCE_ROOT, name)
        assert path is not None
        text = path.read_text()
        assert not re.search(r"import importlib|importlib\.import_module|__import__\(", text), name
