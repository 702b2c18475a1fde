"""LoCoMo benchmark: the hybrid baselines fuse rankings by reciprocal rank (k = 60)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from locomo_scoring import rrf_fuse  # noqa: E402


def test_rrf_ranks_a_unit_high_in_both_lists_first_and_breaks_ties_by_index() -> None:
    assert rrf_fuse([[3, 1, 2], [1, 3, 2]], depth=10) == [1, 3, 2]
    assert rrf_fuse([[5], [7]], depth=10) == [5, 7]  # equal scores: smaller index first
    assert rrf_fuse([[0, 1, 2, 3], [4]], depth=2) == [0, 4]
