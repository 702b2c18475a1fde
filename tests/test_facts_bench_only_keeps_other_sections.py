"""``facts_bench.py --only`` rewrites the sections it ran and keeps the others whole
from the results file it replaces, saying which is which."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from facts_bench import merge_sections  # noqa: E402


def test_an_only_run_keeps_the_sections_it_did_not_run() -> None:
    previous = {"machine": "old", "extractor": {"p": 1}, "updates": {"n": 1},
                "growth": {"g": 1}, "compaction": {"c": 1}, "cost": {"k": 1}, "seconds": 9}
    ran = {"machine": "new", "extractor": {"p": 2}, "updates": {"n": 2}, "seconds": 3}
    merged = merge_sections(previous, ran)
    assert merged["extractor"] == {"p": 2} and merged["updates"] == {"n": 2}
    assert merged["growth"] == {"g": 1} and merged["cost"] == {"k": 1}
    assert merged["machine"] == "new" and merged["seconds"] == 3
    assert merged["sections_run"] == ["extractor", "updates"]
    assert merged["sections_kept"] == ["growth", "compaction", "cost"]
