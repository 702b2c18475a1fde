"""AES-GCM sealing and key rings (sans-IO): wrong or missing keys never yield plaintext."""

from __future__ import annotations

import base64
import os

import pytest

from substrate import CorruptFrameError, Event, KeyRing, MissingKeyError, WrongKeyError
from substrate.codec import open_frame, seal
from substrate.crypto import Cipher, format_ring, parse_key, parse_ring
from substrate.frame import GENESIS_HASH, PREFIX

K1, K2 = bytes(range(32)), bytes(range(32, 64))
AT = {"segment": "seg-000001.sol", "offset": 8}


def _sealed(cipher: Cipher, entry_id: int = 1) -> bytes:
    frame, _ = seal(cipher, entry_id, 5.0, "Main", "message", "secret words", {"a": "b"},
                    GENESIS_HASH, os.urandom(12))
    return frame


def test_a_sealed_frame_opens_to_the_event_and_hides_the_content() -> None:
    cipher = Cipher(KeyRing.single(K1))
    frame = _sealed(cipher)
    assert b"secret" not in frame
    event = open_frame(cipher, frame, **AT, entry_id=1)
    assert event == Event(1, 5.0, "Main", "message", "secret words", {"a": "b"})


def test_the_wrong_key_is_refused_naming_segment_and_entry() -> None:
    frame = _sealed(Cipher(KeyRing.single(K1)), entry_id=4)
    with pytest.raises(WrongKeyError, match=r"entry 4 in seg-000001\.sol offset 8.*key id 1"):
        open_frame(Cipher(KeyRing.single(K2)), frame, **AT, entry_id=4)


def test_a_key_id_missing_from_the_ring_is_refused() -> None:
    frame = _sealed(Cipher(KeyRing({1: K1, 2: K2})))  # sealed with id 2
    with pytest.raises(MissingKeyError, match=r"entry 1 in seg-000001\.sol.*key id 2"):
        open_frame(Cipher(KeyRing.single(K1)), frame, **AT, entry_id=1)


def test_a_rotated_ring_opens_frames_of_every_key() -> None:
    old = _sealed(Cipher(KeyRing.single(K1)))
    ring = KeyRing.single(K1).with_new_key(K2)
    assert ring.current_id == 2
    new = _sealed(Cipher(ring), entry_id=2)
    assert open_frame(Cipher(ring), old, **AT, entry_id=1).entry_id == 1
    assert open_frame(Cipher(ring), new, **AT, entry_id=2).entry_id == 2


def test_tampering_with_a_recomputed_checksum_still_fails_authentication() -> None:
    import zlib

    cipher = Cipher(KeyRing.single(K1))
    frame = bytearray(_sealed(cipher))
    frame[-20] ^= 1  # inside the ciphertext
    frame[4:8] = zlib.crc32(frame[8:]).to_bytes(4, "little")
    with pytest.raises(WrongKeyError):
        open_frame(cipher, bytes(frame), **AT, entry_id=1)


def test_a_frame_for_another_entry_id_is_refused() -> None:
    cipher = Cipher(KeyRing.single(K1))
    with pytest.raises(CorruptFrameError, match="entry 3 was indexed"):
        open_frame(cipher, _sealed(cipher, entry_id=2), **AT, entry_id=3)


def test_a_damaged_frame_is_corrupt_not_garbage() -> None:
    cipher = Cipher(KeyRing.single(K1))
    frame = _sealed(cipher)
    for pos in range(0, len(frame), 7):
        damaged = bytearray(frame)
        damaged[pos] ^= 0x55
        with pytest.raises(CorruptFrameError):
            open_frame(cipher, bytes(damaged), **AT, entry_id=1)
    with pytest.raises(CorruptFrameError):
        open_frame(cipher, frame[: PREFIX.size + 3], **AT, entry_id=1)


def test_nonces_are_random_not_derived_from_ids() -> None:
    cipher = Cipher(KeyRing.single(K1))
    a, b = _sealed(cipher, entry_id=1), _sealed(cipher, entry_id=1)
    assert a != b  # the same id after a torn-tail cut gets a fresh nonce


def test_keys_parse_from_hex_and_base64() -> None:
    assert parse_key(K1.hex()) == K1
    assert parse_key(base64.b64encode(K1).decode()) == K1
    assert parse_key(base64.urlsafe_b64encode(b"\xff" * 32).decode()) == b"\xff" * 32
    for bad in ("", "abc", K1.hex()[:-2], base64.b64encode(b"x" * 31).decode()):
        with pytest.raises(ValueError, match="32 bytes"):
            parse_key(bad)


def test_the_ring_format_round_trips_and_rejects_duplicates() -> None:
    ring = KeyRing({1: K1, 2: K2})
    text = format_ring(ring)
    assert text.startswith("#") and f"2:{K2.hex()}" in text
    assert parse_ring(text) == ring
    assert parse_ring(f"1:{K1.hex()}, 2:{K2.hex()}") == ring
    assert parse_ring(K1.hex()) == KeyRing.single(K1)
    with pytest.raises(ValueError, match="repeats key id 1"):
        parse_ring(f"1:{K1.hex()}\n1:{K2.hex()}")
    with pytest.raises(ValueError, match="entry 2"):
        parse_ring(f"1:{K1.hex()}\nnope")


@pytest.mark.parametrize("keys", [{}, {0: K1}, {1: b"short"}, {1 << 16: K1}])
def test_bad_rings_are_refused(keys: dict[int, bytes]) -> None:
    with pytest.raises(ValueError):
        KeyRing(keys)


def test_key_material_never_appears_in_repr() -> None:
    assert K1.hex() not in repr(KeyRing.single(K1)) and repr(K1) not in repr(KeyRing.single(K1))


def test_the_nonce_pool_hands_out_distinct_nonces_and_forgets_them_after_fork() -> None:
    from substrate.crypto import NoncePool, _empty_pools_after_fork

    pool = NoncePool()
    nonces = [pool.take() for _ in range(1000)]  # crosses several refills
    assert len(set(nonces)) == 1000 and {len(n) for n in nonces} == {12}
    buffered_next = pool._buf[pool._pos : pool._pos + 12]
    _empty_pools_after_fork()  # what a forked child runs: never the parent's buffered nonces
    assert pool.take() != buffered_next
