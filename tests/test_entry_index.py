"""EntryIndex: entry id -> record id in one array, behaving as the dict it replaced
(checked against a dict through random changes), and refusing negative ids."""

from __future__ import annotations

import random

import numpy as np
import pytest

from solace.memory.entry_index import EntryIndex


def test_it_answers_as_a_dict_would_through_random_changes() -> None:
    rng = random.Random(7)
    index, expected = EntryIndex(), {}
    for _ in range(5000):
        entry = rng.randrange(0, 5000)
        if rng.random() < 0.3 and entry in expected:
            del index[entry], expected[entry]
        else:
            rid = rng.choice([rng.randrange(0, 100), (1 << 40) + rng.randrange(100)])
            index[entry] = expected[entry] = rid
        probe = rng.randrange(-3, 6000)
        assert (probe in index) is (probe in expected)
        assert index.get(probe) == expected.get(probe)
        assert index.get(np.int64(probe), -7) == expected.get(probe, -7)
    assert len(index) == len(expected)
    assert list(index.items()) == sorted(expected.items())
    copied = index.copy()
    copied[1] = 3
    assert index.get(1) == expected.get(1)


def test_a_missing_entry_is_a_key_error_and_negative_ids_are_refused() -> None:
    index = EntryIndex()
    index[10_000] = 4
    assert index[10_000] == 4 and "x" not in index and index.get(-1) is None
    with pytest.raises(KeyError):
        index[9]
    with pytest.raises(KeyError):
        del index[9]
    with pytest.raises(ValueError, match="-2"):
        index[-2] = 1
    with pytest.raises(ValueError, match="-1"):
        index[3] = -1


def test_setting_many_at_once_is_setting_each_in_order() -> None:
    rng = random.Random(11)
    pairs = [(rng.randrange(0, 3000), rng.randrange(0, 50)) for _ in range(4000)]
    one_by_one, at_once = EntryIndex(), EntryIndex()
    at_once[5] = 1  # already held: overwritten, counted once
    one_by_one[5] = 1
    for e, r in pairs:
        one_by_one[e] = r
    at_once.set_many([e for e, _ in pairs], [r for _, r in pairs])
    assert list(at_once.items()) == list(one_by_one.items())
    assert len(at_once) == len(one_by_one)
    at_once.set_many([], [])
    with pytest.raises(ValueError, match="2 entry ids but 1"):
        at_once.set_many([1, 2], [3])
    with pytest.raises(ValueError, match="-4"):
        at_once.set_many([1, -4], [3, 3])
