"""The compiled sealer (``substrate/_native.c``) gives the Python path's bytes exactly,
leaves everything off its common path to the Python path, and writes what it sealed."""

from __future__ import annotations

import os
from pathlib import Path
from types import MappingProxyType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from substrate import InvalidEventError, open_substrate
from substrate.codec import open_frame, seal
from substrate.crypto import Cipher, KeyRing
from substrate.frame import MAGIC

native = pytest.importorskip("substrate._native", reason="substrate._native was not built")

KEY = bytes(range(32))
PREV, NONCE = bytes(range(100, 132)), bytes(range(200, 212))
ILLEGAL = [chr(c) for c in range(32) if c not in (9, 10, 13)] + ["\ufffe", "\uffff"]
# every character XML can carry, the ones the record escapes among them
text = st.text(st.characters(exclude_categories=("Cs",), exclude_characters=ILLEGAL)
               | st.sampled_from('&<>"\t\r\n\ufffd\u00e9\u20ac\U0001f600'), max_size=300)
# each width msgpack gives an int, at its edges
ids = st.sampled_from([1, 127, 128, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**62]) \
    | st.integers(1, 2**63 - 1)


def _both(cipher: Cipher, *event: object) -> tuple[tuple[bytes, bytes] | None,
                                                    tuple[bytes, bytes]]:
    assert cipher.native is not None
    return (cipher.native.seal(*event, PREV, NONCE),  # type: ignore[arg-type]
            seal(cipher, *event, PREV, NONCE, compiled=False))  # type: ignore[arg-type]


@settings(max_examples=400, deadline=None)
@given(entry_id=ids, ts=st.floats(allow_nan=False, allow_infinity=False),
       agent=text.filter(bool), kind=st.sampled_from(["message", "fade", "k" * 40]),
       content=text, attrs=st.none() | st.dictionaries(text, text, max_size=6),
       key_id=st.sampled_from([1, 127, 128, 255, 256, 65535]))
def test_the_compiled_seal_gives_the_python_paths_bytes_exactly(
    entry_id: int, ts: float, agent: str, kind: str, content: str,
    attrs: dict[str, str] | None, key_id: int,
) -> None:
    cipher = Cipher(KeyRing({key_id: KEY}))
    compiled, python = _both(cipher, entry_id, ts, agent, kind, content, attrs)
    assert compiled == python


def test_names_and_texts_at_msgpack_string_widths_seal_alike() -> None:
    cipher = Cipher(KeyRing.single(KEY))
    for n in (1, 31, 32, 255, 256, 65000, 65536):
        agent = "a" * min(n, 65000)  # the header holds the agent: at most 65535 bytes
        compiled, python = _both(cipher, 9, 1.5, agent, "message", "é" * n, {"k" * n: "v"})
        assert compiled == python, n


def test_each_special_character_at_each_place_of_a_16_byte_window_seals_alike() -> None:
    """The compiled escaper passes plain text 16 bytes at a time: a character that needs
    escaping, or refusing, is found wherever it falls in a chunk."""
    cipher = Cipher(KeyRing.single(KEY))
    assert cipher.native is not None
    for special in ('&', '<', '>', '"', '\t', '\r', '\n', '\u00ef', '\uffbf', '\uffff', '\x1f'):
        for at in range(40):
            text = "p" * at + special + "q" * (40 - at)
            for event in ((1, 1.0, "Main", "message", text, None),
                          (1, 1.0, text, "message", "c", {text: text})):
                compiled = cipher.native.seal(*event, PREV, NONCE)
                try:
                    python = seal(cipher, *event, PREV, NONCE, compiled=False)
                except InvalidEventError:
                    assert compiled is None, (special, at)
                else:
                    assert compiled == python, (special, at)


def test_a_header_over_its_limit_is_left_to_the_python_path_which_refuses_it() -> None:
    cipher = Cipher(KeyRing.single(KEY))
    assert cipher.native is not None
    assert cipher.native.seal(9, 1.5, "a" * 65536, "message", "", None, PREV, NONCE) is None
    with pytest.raises(InvalidEventError, match="frame header of"):
        seal(cipher, 9, 1.5, "a" * 65536, "message", "", None, PREV, NONCE)


@pytest.mark.parametrize("bad", [
    *({"content": f"x{c}y"} for c in ILLEGAL),
    {"content": "lone \ud800 surrogate"},
    {"agent": ""}, {"kind": ""}, {"agent": "A\x00"},
    {"ts": float("inf")}, {"ts": float("nan")}, {"ts": 3},
    {"attrs": {"k\x01": "v"}}, {"attrs": {"k": "v\uffff"}},
    {"attrs": MappingProxyType({"k": "v"})}, {"attrs": {"k": 1}},
    {"content": type("Text", (str,), {})("a str subclass")},
    {"entry_id": True},
])
def test_anything_off_the_common_path_is_left_to_the_python_path(bad: dict[str, object]) -> None:
    """None from the compiled path; then :func:`seal` seals it or raises naming the field,
    as it did before there was a compiled path."""
    cipher = Cipher(KeyRing.single(KEY))
    event: dict[str, object] = {"entry_id": 3, "ts": 1.5, "agent": "Main", "kind": "message",
                                "content": "fine", "attrs": None, **bad}
    assert cipher.native is not None
    assert cipher.native.seal(*event.values(), PREV, NONCE) is None  # type: ignore[arg-type]
    try:
        python = seal(cipher, *event.values(), PREV, NONCE, compiled=False)  # type: ignore[arg-type]
    except (InvalidEventError, TypeError) as exc:
        with pytest.raises(type(exc)) as raised:
            seal(cipher, *event.values(), PREV, NONCE)  # type: ignore[arg-type]
        assert str(raised.value) == str(exc)
    else:
        assert seal(cipher, *event.values(), PREV, NONCE) == python  # type: ignore[arg-type]


def test_a_sealed_frame_opens_to_the_event() -> None:
    cipher = Cipher(KeyRing.single(KEY))
    assert cipher.native is not None
    sealed = cipher.native.seal(4, 2.25, "Mo\"od", "message", "a <b> & c\r\n", {"t": "x\ty"},
                                PREV, NONCE)
    assert sealed is not None
    event = open_frame(cipher, sealed[0], segment="seg", offset=0, entry_id=4)
    assert (event.agent, event.content, dict(event.attrs)) == ("Mo\"od", "a <b> & c\r\n",
                                                              {"t": "x\ty"})


def test_append_writes_the_frame_it_seals_at_the_end_of_the_file(tmp_path: Path) -> None:
    cipher = Cipher(KeyRing.single(KEY))
    assert cipher.native is not None
    fd = os.open(tmp_path / "seg", os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.write(fd, MAGIC)
        event = (5, 1.0, "Main", "message", "hello", None, PREV, NONCE)
        done = cipher.native.append(fd, len(MAGIC), -1, *event)
        frame, digest = seal(cipher, *event, compiled=False)
        assert done == (len(frame), digest)
        assert (tmp_path / "seg").read_bytes() == MAGIC + frame
        size = len(MAGIC) + len(frame)
        # no room: nothing written
        assert cipher.native.append(fd, size, len(frame) - 1, *event) is None
        # the file is not the size this writer left it: its length, nothing written
        assert cipher.native.append(fd, size - 1, -1, *event) == size
        assert os.fstat(fd).st_size == size
    finally:
        os.close(fd)


def test_a_substrate_writes_the_same_log_with_or_without_the_compiled_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("substrate.crypto.NoncePool.take", lambda self: NONCE)
    events = [("Main", "message", f"turn {i} & <more>", {"dia_id": f"D1:{i}"}, 1.0 + i)
              for i in range(50)]
    logs = []
    for name, compiled in (("compiled", True), ("python", False)):
        with open_substrate(tmp_path / name, KEY, fsync="never") as sub:
            if not compiled:
                sub._cipher.native = None
            for agent, kind, content, attrs, ts in events:
                sub.append(agent, kind, content, attrs=attrs, ts=ts)
            assert [e.content for e in sub.scan()] == [e[2] for e in events]
        logs.append(b"".join(p.read_bytes() for p in sorted((tmp_path / name).glob("seg-*"))))
    assert logs[0] == logs[1]


def test_the_compiled_sealer_is_built_where_its_headers_are() -> None:
    """setup.sh installs OpenSSL's and zlib's headers; with them the build must succeed
    (a silent fallback would make every append take the slow path)."""
    import substrate.crypto

    assert substrate.crypto.Sealer is native.Sealer
    assert Cipher(KeyRing.single(KEY)).native is not None


def test_a_compiled_append_on_a_full_disk_writes_nothing_and_the_log_goes_on(
    tmp_path: Path,
) -> None:
    """Real ENOSPC (a small tmpfs), through write(2) in the compiled path: the append
    raises, the partial frame is cut, and once there is room the log goes on whole."""
    from disk_support import fill, small_tmpfs

    with small_tmpfs(tmp_path / "mnt", "1m") as mnt:
        home = mnt / "sub"
        with open_substrate(home, KEY, fsync="never") as sub:
            assert sub._cipher.native is not None
            sub.append("Main", "message", "before", ts=1.0)
            filler = fill(mnt)
            with pytest.raises(OSError):
                for i in range(1000):  # the page cache may take a few before it refuses
                    sub.append("Main", "message", "x" * 3000, ts=2.0 + i)
            written = sub.last_id
            assert sub.stats().bytes == sum(p.stat().st_size for p in home.glob("seg-*"))
            filler.unlink()
            assert sub.append("Main", "message", "after", ts=9.0) == written + 1
        with open_substrate(home, KEY) as sub:
            assert sub.verify().frames == written + 1
            assert sub.get(written + 1).content == "after"
