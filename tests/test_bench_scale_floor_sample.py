"""Scale benchmark: the embedding floor is measured on texts spread through the window,
not on its first conversations."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from scale_bench import spread  # noqa: E402


def test_the_floor_sample_spans_the_whole_window() -> None:
    window = [f"turn {i}" for i in range(10_000)]
    sample = spread(window, 2000)
    assert len(sample) == 2000
    assert sample[0] == "turn 0" and sample[-1] == "turn 9995"
    assert sample == window[::5]


def test_a_window_smaller_than_the_sample_is_taken_whole() -> None:
    window = [f"turn {i}" for i in range(888)]
    assert spread(window, 2000) == window
