"""Copy-on-write maps and sets (solace.memory.layered): every version reads as the dict
it was written as, whatever its relatives do, and folding its layer changes nothing."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import solace.memory.layered as layered
from solace.memory.layered import LayeredDict, LayeredSet

# (version to derive from or write, op, key, value); keys from a small range collide.
_ops = st.lists(
    st.tuples(st.integers(0, 3), st.sampled_from(["set", "del", "derive"]),
              st.integers(0, 12), st.integers()),
    max_size=300,
)


def _same(layer: LayeredDict[int, int], model: dict[int, int]) -> None:
    assert dict(layer.items()) == model
    assert len(layer) == len(model)
    assert sorted(layer) == sorted(model)
    for key in range(13):
        assert (key in layer) == (key in model)
        assert layer.get(key, None) == model.get(key, None)


@settings(max_examples=200, deadline=None)
@given(start=st.dictionaries(st.integers(0, 12), st.integers(), max_size=13), ops=_ops,
       folds=st.booleans())
def test_every_version_reads_as_its_own_dict_whatever_the_others_write(
        start: dict[int, int], ops: list[tuple[int, str, int, int]], folds: bool) -> None:
    limits = layered.FLOOR, layered.SCALE
    if folds:  # every version with a change of its own folds it into a new base
        layered.FLOOR, layered.SCALE = 0, 0
    try:
        _replay(start, ops)
    finally:
        layered.FLOOR, layered.SCALE = limits


def _replay(start: dict[int, int], ops: list[tuple[int, str, int, int]]) -> None:
    versions = [LayeredDict(start)]
    models = [dict(start)]
    for which, op, key, value in ops:
        i = which % len(versions)
        if op == "derive":
            versions.append(versions[i].derived())
            models.append(dict(models[i]))
        elif op == "set":
            versions[i][key] = value
            models[i][key] = value
        elif key in models[i]:
            del versions[i][key]
            del models[i][key]
        else:
            try:
                del versions[i][key]
            except KeyError:
                pass
            else:
                raise AssertionError(f"deleting absent key {key} did not raise")
    for version, model in zip(versions, models, strict=True):
        _same(version, model)


def test_a_layer_past_its_limit_is_folded_into_a_new_base_and_reads_the_same(
        monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(layered, "FLOOR", 4)
    monkeypatch.setattr(layered, "SCALE", 1)
    first = LayeredDict({k: k for k in range(10)})
    second = first.derived()
    for k in range(6):
        del second[k]
    second[20] = 20
    third = second.derived()  # folds: 7 changes > max(4, isqrt(10))
    assert third._base is not first._base and not third._top and not third._gone
    assert dict(third.items()) == {6: 6, 7: 7, 8: 8, 9: 9, 20: 20}
    assert dict(first.items()) == {k: k for k in range(10)}
    fourth = first.derived()  # no layer to fold: shares the base
    assert fourth._base is first._base


def test_a_changed_set_leaves_the_set_it_came_from_as_it_was() -> None:
    old = LayeredSet(range(5))
    new = old.changed(added=[7, 8], removed=[0, 1, 9])
    assert set(old) == {0, 1, 2, 3, 4} and len(old) == 5
    assert set(new) == {2, 3, 4, 7, 8} and len(new) == 5
    assert new == frozenset({2, 3, 4, 7, 8})
    assert (new & {3, 8, 100}) == {3, 8}
    assert 7 in new and 0 not in new and 0 in old


def test_a_member_both_removed_and_added_stays() -> None:
    assert 3 in LayeredSet([3]).changed(added=[3], removed=[3])
