from collections.abc import Mapping

class Sealer:
    def __init__(self, key: bytes, key_id: int) -> None: ...
    def seal(
        self, entry_id: int, ts: float, agent: str, kind: str, content: str,
        attrs: Mapping[str, str] | None, prev_hash: bytes, nonce: bytes, /,
    ) -> tuple[bytes, bytes] | None: ...
    def append(
        self, fd: int, size: int, room: int, entry_id: int, ts: float, agent: str,
        kind: str, content: str, attrs: Mapping[str, str] | None, prev_hash: bytes,
        nonce: bytes, /,
    ) -> tuple[int, bytes] | int | None: ...
