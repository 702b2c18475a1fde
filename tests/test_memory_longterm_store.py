"""The long-term store is a protocol: FAISS is one implementation, made in one place."""

from __future__ import annotations

import ast
from pathlib import Path

from solace.memory.longterm import LongTermStore, LongTermTier, open_longterm_store

ROOT = Path(__file__).resolve().parents[1]


def test_the_faiss_tier_is_a_longterm_store() -> None:
    store: LongTermStore = open_longterm_store(dim=8)
    assert isinstance(store, LongTermTier) and len(store) == 0
    for name in LongTermStore.__dict__:
        if not name.startswith("_") or name in ("__len__", "__contains__"):
            assert callable(getattr(store, name, None)), name


def test_no_module_but_longterm_constructs_the_faiss_tier() -> None:
    makers = []
    for path in (ROOT / "solace").rglob("*.py"):
        if path.name == "longterm.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id == "LongTermTier"):
                makers.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert makers == []
