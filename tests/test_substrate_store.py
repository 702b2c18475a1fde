"""The Substrate: ids, reads, scans, segments, keys, fsync policies, threads."""

from __future__ import annotations

import random
import stat
import threading
import time
from pathlib import Path

import pytest

import substrate
from substrate import (
    BUILTIN_KINDS,
    Event,
    InvalidEventError,
    KeyRing,
    KeySource,
    MissingKeyError,
    NewEvent,
    SubstrateError,
    SubstrateLockedError,
    UnknownEntryError,
    WrongKeyError,
    open_substrate,
)

KEY = bytes(range(32))
OTHER = bytes(range(1, 33))


def test_public_names_are_exported() -> None:
    for name in substrate.__all__:
        assert getattr(substrate, name) is not None
    assert {"open_substrate", "Substrate", "Event", "KeySource", "VerifyReport"} <= set(
        substrate.__all__
    )
    assert (Path(substrate.__file__).parent / "py.typed").exists()


def test_ids_start_at_one_and_events_read_back_exactly(tmp_path: Path) -> None:
    with open_substrate(tmp_path, KEY) as sub:
        assert sub.last_id == 0
        a = sub.append("Main", "message", "hi\r\n", attrs={"dia_id": "D1:3"}, ts=10.5)
        b = sub.append("Mood", "reflection", "", ts=11.0)
        assert (a, b, sub.last_id) == (1, 2, 2)
        assert sub.get(1) == Event(1, 10.5, "Main", "message", "hi\r\n", {"dia_id": "D1:3"})
        assert sub.get(2).attrs == {}
    with open_substrate(tmp_path, KEY) as sub:  # and after reopening
        assert sub.last_id == 2 and sub.get(1).content == "hi\r\n"
        assert sub.append("Main", "cue", "c", ts=12.0) == 3


def test_ts_defaults_to_now(tmp_path: Path) -> None:
    with open_substrate(tmp_path, KEY) as sub:
        before = time.time()
        ts = sub.get(sub.append("Main", "message", "x")).ts
        assert before <= ts <= time.time()


def test_unknown_ids_raise_a_key_error(tmp_path: Path) -> None:
    with open_substrate(tmp_path, KEY) as sub:
        sub.append("Main", "message", "x", ts=1.0)
        for bad in (0, 2, -1):
            with pytest.raises(UnknownEntryError, match=f"entry {bad} was never written"):
                sub.get(bad)
        with pytest.raises(KeyError):
            sub.get(5)


def test_unknown_kinds_are_refused_by_name_and_extra_kinds_extend_the_set(tmp_path: Path) -> None:
    with open_substrate(tmp_path, KEY, extra_kinds=["mood_shift"]) as sub:
        assert BUILTIN_KINDS < sub.kinds
        sub.append("Mood", "mood_shift", "calm", ts=1.0)
        with pytest.raises(ValueError, match="unknown kind 'dream'"):
            sub.append("Main", "dream", "x", ts=1.0)
        assert sub.last_id == 1
    for bad in (["Bad"], ["1x"], ["a-b"], "abc"):
        with pytest.raises((ValueError, TypeError)):
            open_substrate(tmp_path / "x", KEY, extra_kinds=bad)


@pytest.mark.parametrize(
    "option", [{"batch_interval_ms": 0}, {"batch_max_events": 0}, {"segment_bytes": 10}]
)
def test_bad_numeric_options_are_value_errors(tmp_path: Path, option: dict[str, int]) -> None:
    with pytest.raises(ValueError, match=next(iter(option))):
        open_substrate(tmp_path, KEY, **option)  # type: ignore[arg-type]


def test_invalid_events_write_nothing(tmp_path: Path) -> None:
    with open_substrate(tmp_path, KEY) as sub:
        with pytest.raises(InvalidEventError, match="U\\+0000"):
            sub.append("Main", "message", "a\x00b", ts=1.0)
        with pytest.raises(InvalidEventError):
            sub.append_many([("Main", "message", "ok", None, 1.0), ("Main", "message", "\x01")])
        with pytest.raises(TypeError):
            sub.append("Main", "message", "x", ts="1.0")  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            sub.append("Main", "message", "x", attrs=[("a", "b")])  # type: ignore[arg-type]
        assert sub.last_id == 0 and sub.stats().bytes == 0
        assert sub.append("Main", "message", "fine", ts=1.0) == 1
        assert sub.verify().frames == 1


def test_append_many_accepts_tuples_and_new_events_and_shares_one_timestamp(
    tmp_path: Path,
) -> None:
    with open_substrate(tmp_path, KEY) as sub:
        ids = sub.append_many(
            [("Main", "message", "a"), ("Main", "fact", "b", {"k": "v"}),
             ("Mood", "cue", "c", None, 5.0), NewEvent("Time", "speech", "d")]
        )
        assert ids == [1, 2, 3, 4] and sub.append_many([]) == []
        events = list(sub.scan())
        assert [e.content for e in events] == ["a", "b", "c", "d"]
        assert events[0].ts == events[1].ts == events[3].ts and events[2].ts == 5.0
        assert events[1].attrs == {"k": "v"}
        with pytest.raises(TypeError, match="NewEvent or"):
            sub.append_many([("Main", "message")])  # type: ignore[list-item]


def test_scan_filters_by_agent_kind_since_and_until_in_id_order(tmp_path: Path) -> None:
    with open_substrate(tmp_path, KEY) as sub:
        for i in range(30):
            sub.append(["Main", "Mood", "Time"][i % 3], ["message", "cue"][i % 2], str(i),
                       ts=float(100 + i))
        assert [e.entry_id for e in sub.scan()] == list(range(1, 31))
        assert {e.agent for e in sub.scan(agent="Mood")} == {"Mood"}
        assert [e.entry_id for e in sub.scan(agent="Main", kind="cue")] == [4, 10, 16, 22, 28]
        assert [e.entry_id for e in sub.scan(since_id=27)] == [28, 29, 30]
        assert [e.entry_id for e in sub.scan(until_ts=102.0)] == [1, 2, 3]
        assert list(sub.scan(agent="Nobody")) == [] and list(sub.scan(kind="fact")) == []


def test_a_scan_by_several_kinds_is_one_pass_in_id_order(tmp_path: Path) -> None:
    with open_substrate(tmp_path, KEY) as sub:
        for i in range(12):
            sub.append("Main", ["message", "cue", "fact"][i % 3], str(i))
        assert [e.entry_id for e in sub.scan(kinds={"fact", "message"})] == [
            1, 3, 4, 6, 7, 9, 10, 12]
        assert [e.entry_id for e in sub.scan(kinds=["cue"], since_id=5)] == [8, 11]
        assert list(sub.scan(kinds={"reflection"})) == [] and list(sub.scan(kinds=())) == []
        # each kind from its own since id: a recent reader is not read from an old one's
        assert [e.entry_id for e in sub.scan(kinds={"fact": 0, "message": 7})] == [3, 6, 9, 10,
                                                                                  12]
        with pytest.raises(TypeError, match="'cue'"):
            sub.scan(kinds="cue")
        with pytest.raises(ValueError, match="not combined"):
            sub.scan(agent="Main", kinds={"cue"})


def test_stats_count_agents_kinds_keys_and_segments(tmp_path: Path) -> None:
    with open_substrate(tmp_path, KEY, segment_bytes=1024) as sub:
        for i in range(20):
            sub.append("Main" if i < 15 else "Mood", "message", "x" * 100, ts=1.0)
        s = sub.stats()
        assert (s.events, s.by_agent, s.by_kind) == (20, {"Main": 15, "Mood": 5}, {"message": 20})
        assert s.key_ids == {1: 20} and s.current_key_id == 1
        assert s.segments == len(list(tmp_path.glob("seg-*.sol"))) > 1
        assert s.bytes == sum(p.stat().st_size for p in tmp_path.glob("seg-*.sol"))


def test_segments_rotate_at_the_configured_size_and_a_big_event_gets_its_own(
    tmp_path: Path,
) -> None:
    with open_substrate(tmp_path, KEY, segment_bytes=2048, fsync="always") as sub:
        sub.append_many([("Main", "message", "x" * 300, None, 1.0)] * 20)
        sub.append("Main", "message", "y" * 5000, ts=2.0)
        sub.append("Main", "message", "z", ts=3.0)
        sizes = [p.stat().st_size for p in sorted(tmp_path.glob("seg-*.sol"))]
        assert all(s <= 2048 for s in sizes[:-2]) and sizes[-2] > 5000
        assert sub.verify().frames == 22
    with open_substrate(tmp_path, KEY) as sub:
        assert sub.get(21).content == "y" * 5000 and sub.get(22).content == "z"
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in tmp_path.glob("seg-*.sol"))


def test_100k_events_append_reopen_and_read_back(tmp_path: Path) -> None:
    n, chunk = 100_000, 5_000
    agents = ["Supervisor", "Main", "Mood", "Time", "Mouth"]
    with open_substrate(tmp_path, KEY, fsync="never", segment_bytes=4 << 20) as sub:
        for start in range(0, n, chunk):
            ids = sub.append_many(
                (agents[i % 5], "message", f"event {i} " + "·" * (i % 50), {"i": str(i)},
                 float(i))
                for i in range(start, start + chunk)
            )
            assert ids == list(range(start + 1, start + chunk + 1))
    started = time.perf_counter()
    with open_substrate(tmp_path, KEY, fsync="never") as sub:
        open_seconds = time.perf_counter() - started
        assert sub.last_id == n and sub.stats().by_agent["Mood"] == n // 5
        count = 0
        for count, event in enumerate(sub.scan(), 1):  # noqa: B007 - count is checked below
            i = event.entry_id - 1
            assert event.content == f"event {i} " + "·" * (i % 50) and event.attrs == {"i": str(i)}
        assert count == n
        for entry_id in random.Random(0).sample(range(1, n + 1), 1000):
            assert sub.get(entry_id).ts == entry_id - 1
    assert open_seconds < 10, f"indexing 100k events took {open_seconds:.2f} s"


def test_the_wrong_key_is_refused_on_open_naming_segment_and_entry(tmp_path: Path) -> None:
    with open_substrate(tmp_path, KEY) as sub:
        sub.append_many([("Main", "message", "x")] * 3)
    with pytest.raises(WrongKeyError, match=r"entry 3 in .*seg-000001\.sol offset \d+"):
        open_substrate(tmp_path, OTHER)
    with open_substrate(tmp_path, KEY) as sub:  # nothing was changed by the refusal
        assert sub.last_id == 3 and sub.verify().frames == 3


def test_a_ring_without_a_frames_key_id_is_a_missing_key(tmp_path: Path) -> None:
    ring = KeyRing({1: KEY, 2: OTHER})
    with open_substrate(tmp_path, ring) as sub:
        sub.append("Main", "message", "sealed with key 2", ts=1.0)
    with pytest.raises(MissingKeyError, match=r"entry 1 in .*seg-000001\.sol.*key id 2"):
        open_substrate(tmp_path, KEY)


def test_key_rotation_reads_old_and_new_frames(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SOLACE_SUBSTRATE_KEY", raising=False)
    with open_substrate(tmp_path) as sub:
        sub.append("Main", "message", "old", ts=1.0)
        assert sub.rotate_key() == 2
        sub.append("Main", "message", "new", ts=2.0)
        assert [e.content for e in sub.scan()] == ["old", "new"]
        assert sub.stats().key_ids == {1: 1, 2: 1} and sub.stats().current_key_id == 2
    assert stat.S_IMODE((tmp_path / "substrate.key").stat().st_mode) == 0o600
    with open_substrate(tmp_path, key_source=KeySource()) as sub:
        assert [e.content for e in sub.scan()] == ["old", "new"] and sub.verify().frames == 2
        assert sub.stats().current_key_id == 2


def test_rotate_key_needs_a_key_file(tmp_path: Path) -> None:
    with open_substrate(tmp_path, KEY) as sub, pytest.raises(SubstrateError, match="key argument"):
        sub.rotate_key()


def test_a_directory_opens_once_at_a_time(tmp_path: Path) -> None:
    with open_substrate(tmp_path, KEY):
        with pytest.raises(SubstrateLockedError, match="already open"):
            open_substrate(tmp_path, KEY)
    open_substrate(tmp_path, KEY).close()


def test_close_is_idempotent_and_later_calls_raise(tmp_path: Path) -> None:
    sub = open_substrate(tmp_path, KEY)
    sub.append("Main", "message", "x", ts=1.0)
    sub.close()
    sub.close()
    with pytest.raises(SubstrateError, match="closed"):
        sub.append("Main", "message", "y", ts=1.0)
    with pytest.raises(SubstrateError, match="closed"):
        sub.get(1)


@pytest.mark.parametrize("fsync", ["always", "batch", "never"])
def test_threads_appending_concurrently_get_monotonic_unique_ids(
    tmp_path: Path, fsync: str
) -> None:
    threads_n, per_thread = 8, 60
    got: dict[int, list[int]] = {}

    def work(t: int) -> None:
        ids = []
        for i in range(per_thread):
            if i % 10 == 9:
                ids += substrate_ref.append_many(
                    [(f"T{t}", "message", f"{t}:{i}:{j}", None, 1.0) for j in range(3)]
                )
            else:
                ids.append(substrate_ref.append(f"T{t}", "message", f"{t}:{i}", ts=1.0))
        got[t] = ids

    with open_substrate(tmp_path, KEY, fsync=fsync, segment_bytes=4096) as substrate_ref:  # type: ignore[arg-type]
        workers = [threading.Thread(target=work, args=(t,)) for t in range(threads_n)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        all_ids = sorted(i for ids in got.values() for i in ids)
        assert all_ids == list(range(1, substrate_ref.last_id + 1))
        for t, ids in got.items():
            assert ids == sorted(ids)
            assert all(substrate_ref.get(i).agent == f"T{t}" for i in ids)
            contents = [substrate_ref.get(i).content for i in ids]
            assert contents == sorted(contents, key=lambda c: [int(x) for x in c.split(":")[1:]])
        assert substrate_ref.verify().frames == len(all_ids)


def test_reads_run_alongside_appends(tmp_path: Path) -> None:
    with open_substrate(tmp_path, KEY, fsync="never") as sub:
        sub.append("Main", "message", "0", ts=0.0)
        stop = threading.Event()
        errors: list[BaseException] = []

        def reader() -> None:
            while not stop.is_set():
                last = sub.last_id
                e = sub.get(last)
                if e.content != str(last - 1):
                    errors.append(AssertionError(e))

        readers = [threading.Thread(target=reader) for _ in range(2)]
        for r in readers:
            r.start()
        for i in range(1, 2000):
            sub.append("Main", "message", str(i), ts=float(i))
        stop.set()
        for r in readers:
            r.join()
        assert not errors


def test_events_are_frozen_and_hashable() -> None:
    e = Event(1, 1.0, "a", "cue", "x", {"k": "v"})
    with pytest.raises(AttributeError):
        e.content = "y"  # type: ignore[misc]
    with pytest.raises(TypeError):
        e.attrs["k"] = "w"  # type: ignore[index]
    assert hash(e) == hash(Event(1, 1.0, "a", "cue", "x", {"k": "v"}))


def test_a_key_of_the_wrong_length_is_a_value_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="32 raw bytes"):
        open_substrate(tmp_path, b"short")
    with pytest.raises(ValueError, match="not both"):
        open_substrate(tmp_path, KEY, key_source=KeySource())
