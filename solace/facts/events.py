"""Fact memory's events: every change is one ``memfact`` event in the substrate.

Sans-IO: these functions build :class:`~solace.conversation.events.Draft` events and
read them back; appending is the caller's. One kind, ``memfact``, with an ``op``
attribute:

``write``    a fact entered (``class`` ADD / UPDATE / CONFLICT and its ``reason``;
             ``supersedes`` / ``conflicts`` name the facts it touched). The content
             is the fact's text sealed under the fact's own data key
             (:mod:`solace.facts.vault`), never plaintext, so deleting the key makes
             the text unrecoverable from the append-only log.
``confirm``  a NOOP: a restatement raised the fact's mentions and last-confirmed time.

``write`` and ``confirm`` carry ``as_of`` when the statement is older than the
event (an imported row's date, a replayed turn's time): the fact's dates are the
statement's, so decay, eviction order and "as of" at recall follow it.
``evict``    facts left a full memory (``facts``: ids, ``reason``: the policy).
``delete``   one fact was deleted (its key destroyed first).
``forget``   a memory id was forgotten (all its keys destroyed first).
``compact``  an accepted compaction: ``inputs`` were superseded by ``outputs``
             (written in the same batch).

Attribute values are strings; id lists are comma-joined (fact ids have no commas).
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from solace.conversation.events import Draft
from solace.facts.model import Source, WriteClass

__all__ = [
    "FACT_AGENT",
    "FACT_KIND",
    "WrittenFact",
    "compact_draft",
    "confirm_draft",
    "delete_draft",
    "evict_draft",
    "forget_draft",
    "join_ids",
    "open_text",
    "seal_text",
    "split_ids",
    "write_draft",
]

FACT_KIND = "memfact"
#: The author of fact events when no actor wrote them (the operator, an import).
FACT_AGENT = "facts"
_NONCE = 12


def join_ids(ids: Sequence[str]) -> str:
    return ",".join(ids)


def split_ids(value: str) -> tuple[str, ...]:
    return tuple(v for v in value.split(",") if v)


def _aad(memory_id: str, fact_id: str) -> bytes:
    return f"memfact/{memory_id}/{fact_id}".encode()


def seal_text(text: str, *, key: bytes, memory_id: str, fact_id: str, nonce: bytes) -> str:
    """The event content for ``text``: base64 of nonce + AES-GCM ciphertext under ``key``."""
    sealed = AESGCM(key).encrypt(nonce, text.encode(), _aad(memory_id, fact_id))
    return base64.b64encode(nonce + sealed).decode("ascii")


def open_text(content: str, *, key: bytes, memory_id: str, fact_id: str) -> str:
    """The text :func:`seal_text` sealed. Raises ``cryptography.exceptions.InvalidTag``
    or ``ValueError`` for a wrong key or damaged content."""
    raw = base64.b64decode(content.encode("ascii"), validate=True)
    plain = AESGCM(key).decrypt(raw[:_NONCE], raw[_NONCE:], _aad(memory_id, fact_id))
    return plain.decode()


@dataclass(frozen=True, slots=True)
class WrittenFact:
    """The attributes of one ``write`` (the text travels sealed in the content)."""

    fact_id: str
    memory_id: str
    store: str
    write_class: WriteClass
    reason: str
    importance: float
    source: Source
    slot: str = ""
    supersedes: tuple[str, ...] = ()
    conflicts: tuple[str, ...] = ()
    as_of: float | None = None  # when it was stated, if not when it was written


def write_draft(w: WrittenFact, sealed_text: str, agent: str) -> Draft:
    return Draft(agent, FACT_KIND, sealed_text, {
        "op": "write", "memory_id": w.memory_id, "store": w.store, "fact_id": w.fact_id,
        "class": w.write_class.value, "reason": w.reason, "importance": f"{w.importance:.4f}",
        "source": w.source, "slot": w.slot, "supersedes": join_ids(w.supersedes),
        "conflicts": join_ids(w.conflicts),
        **({} if w.as_of is None else {"as_of": repr(float(w.as_of))}),
    })


def confirm_draft(memory_id: str, fact_id: str, reason: str, agent: str,
                  as_of: float | None = None) -> Draft:
    attrs = {"op": "confirm", "memory_id": memory_id, "fact_id": fact_id, "class": "NOOP",
             "reason": reason}
    if as_of is not None:
        attrs["as_of"] = repr(float(as_of))
    return Draft(agent, FACT_KIND, "", attrs)


def evict_draft(memory_id: str, fact_ids: Sequence[str], reason: str, agent: str) -> Draft:
    return Draft(agent, FACT_KIND, "", {"op": "evict", "memory_id": memory_id,
                                        "facts": join_ids(fact_ids), "reason": reason})


def delete_draft(memory_id: str, fact_id: str, agent: str) -> Draft:
    return Draft(agent, FACT_KIND, "", {"op": "delete", "memory_id": memory_id,
                                        "fact_id": fact_id})


def forget_draft(memory_id: str, agent: str) -> Draft:
    return Draft(agent, FACT_KIND, "", {"op": "forget", "memory_id": memory_id})


def compact_draft(memory_id: str, store: str, inputs: Sequence[str], outputs: Sequence[str],
                  reason: str, agent: str) -> Draft:
    return Draft(agent, FACT_KIND, "", {"op": "compact", "memory_id": memory_id,
                                        "store": store, "inputs": join_ids(inputs),
                                        "outputs": join_ids(outputs), "reason": reason})
