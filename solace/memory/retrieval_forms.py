"""The texts one agent's retrieval indexes, kept across restarts in a sealed file.

A :class:`~solace.memory.candidates.Retriever` indexes two kinds of text it derives
from substrate events: the rehydrated form of each rung-3 record (the ladder's
extractive rung over the record's events) and the form of each *unit* (one event of a
faded episode). Both are pure functions of the events, the config and the code, and
the first recall after a restart would otherwise derive all of them again: at 33k
events, 25 s of a 34 s first recall. So they are written at close::

    <home>/memory/<agent>/retrieval-forms.sealed

sealed (:mod:`solace.sealed`, ``ring.derive("snapshot")``) for the role
``memory/<agent>/retrieval-forms``, with a :func:`fingerprint` of everything they
depend on: the retrieval and memory config, the tokenizer, and the source of the
modules that derive them (:data:`FORMS_SOURCES`, the tokenizer's, and every module of
ours they import but the config classes, whose values are stamped instead:
:data:`STAMPED_BY_VALUE`, :mod:`solace.source_digest`), so a change of that code or
config drops the file (the forms are derived again, as on a new home) instead of
serving a stale text, and a change anywhere else keeps it. A record's form is only
reused for the same entry ids. A refused or unreadable file is
skipped with one WARNING; the next close writes a new one.

A unit's text is written once for every agent, in one shared file beside theirs::

    <home>/memory/unit-forms.sealed

(role ``memory/unit-forms``, the same fingerprint): each agent's file lists the units
its index holds, and its units' BM25 index (which indexes exactly those texts) takes
them back from the shared file on reading. Format 2 wrote each text twice in every
agent's file; format 3 once in each (at 1M events Main and Supervisor each held the
same 549k unit texts, 78 MB, and Mood 309k of them: reading them again took a second
of a restart). A format 3 file is still read (its texts are its own), and the next
close writes format 4. The shared file is written first, so a close that cannot write
it leaves the last pair as it was; an agent file listing a unit the shared file lacks
(a close that stopped after it) is refused with a WARNING, and that agent's forms are
derived again.

Each BM25 index's postings are kept as the index holds them, int32 positions and
uint16 term frequencies, their types named in the file (files that name none hold
int64 ones, and are still read): at 1M events that halved Main's file, 170 to 90 MB.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack
import numpy as np

from solace.memory.bm25 import LexicalState
from solace.sealed import SealedFileRefused, read_sealed, write_sealed
from solace.source_digest import PACKAGES, source_digest
from substrate import KeyRing

__all__ = ["FORMAT_VERSION", "FORMS_SOURCES", "NAME", "OWN_TEXTS_VERSION", "PURPOSE",
           "STAMPED_BY_VALUE", "UNITS_NAME", "UNITS_ROLE", "Forms", "UnitForms", "fingerprint",
           "read_forms", "read_unit_forms", "role", "write_forms", "write_unit_forms"]

log = logging.getLogger(__name__)

FORMAT_VERSION = 4
#: The earlier format still read: each agent's file holds its units' texts.
OWN_TEXTS_VERSION = 3
#: Mixed into every :func:`fingerprint`: the format the stamp last changed with. A
#: file's format is checked on its own (its ``version``), so a new layout that still
#: reads the last one (4 reads 3) keeps the stamp, and a home's texts are not derived
#: again for it (at 1M events, 18 minutes).
_STAMP_EPOCH = 3
NAME = "retrieval-forms.sealed"
#: The units' texts of every agent, in ``<home>/memory/`` (format 4 on).
UNITS_NAME = "unit-forms.sealed"
UNITS_ROLE = "memory/unit-forms"
PURPOSE = "snapshot"
#: The modules whose code derives the forms and their indexes (with what they import):
#: :func:`~solace.memory.form_derivation.derive_forms`, the runtime's ``rehydrate`` and
#: ``unit_form`` (:mod:`solace.retrieval_texts`, over the ladder's ``rehydrate_text``,
#: which it is passed, hence the ladder by name), BM25's terms. Not the
#: retriever that calls them (:mod:`~solace.memory.candidates`), nor how hits are scored
#: or ordered: a kept index's documents are checked against the tiers' records by the
#: first query's full sync, so only the texts' own derivation is stamped. Nor this
#: module: how the file is laid out is :data:`FORMAT_VERSION`'s to say.
FORMS_SOURCES = ("solace.memory.form_derivation", "solace.memory.ladder",
                 "solace.memory.lexical", "solace.retrieval_texts")
#: Reached from :data:`FORMS_SOURCES` but not stamped by its code: the config classes.
#: What the derivation takes from them, the memory config and each agent's perspective,
#: is stamped by value (:func:`fingerprint`'s ``depends_on``), and a key added anywhere
#: else in the config must not make a home derive its forms again (at 953k events, 18
#: minutes before the first recall).
STAMPED_BY_VALUE = ("solace.config.schema",)

#: record id -> (entry ids, rehydrated text, tokens)
RecordForms = dict[int, tuple[tuple[int, ...], str, int]]
#: entry id -> (unit text, tokens)
UnitForms = dict[int, tuple[str, int]]


@dataclass(slots=True)
class Forms:
    """A retriever's derived texts (see the module docstring)."""

    records: RecordForms = field(default_factory=dict)
    #: the units its index holds (read from a format 4 file: the shared units' forms
    #: it was read with, which may hold more)
    units: UnitForms = field(default_factory=dict)
    #: the BM25 indexes over records and over units, when kept
    records_index: LexicalState | None = None
    units_index: LexicalState | None = None


def _pack_index(state: LexicalState | None, *, texts: bool = True
                ) -> dict[str, object] | None:
    """``state`` as msgpack-able fields; without its texts when ``texts`` is false (the
    reader supplies them: :func:`_unpack_index`)."""
    if state is None:
        return None
    return {"k1": state.k1, "b": state.b, "ids": state.ids.tobytes(),
            "texts": state.texts if texts else None,
            "terms": state.terms, "indptr": state.indptr.tobytes(),
            "docs": state.docs.tobytes(), "docs_type": state.docs.dtype.str,
            "tfs": state.tfs.tobytes(), "tfs_type": state.tfs.dtype.str}


def _unpack_index(packed: dict[str, Any] | None, units: UnitForms | None = None
                  ) -> LexicalState | None:
    """The state packed by :func:`_pack_index`, its texts from ``units`` when it was
    packed without them; ValueError/KeyError/TypeError if bad (a text missing too)."""
    if packed is None:
        return None
    ints = {k: np.frombuffer(packed[k], dtype=np.dtype(packed.get(f"{k}_type", "<i8")))
            for k in ("ids", "indptr", "docs", "tfs")}  # no type named: int64
    if packed["texts"] is None:
        if units is None:
            raise ValueError("an index kept without its texts, and no units to take them from")
        texts = [units[e][0] for e in ints["ids"].tolist()]
    else:
        texts = [str(t) for t in packed["texts"]]
    state = LexicalState(float(packed["k1"]), float(packed["b"]), ints["ids"], texts,
                         [str(t) for t in packed["terms"]], ints["indptr"], ints["docs"],
                         ints["tfs"])
    state.check()
    return state


def role(agent: str) -> str:
    """The sealed-file role of ``agent``'s forms file."""
    return f"memory/{agent}/retrieval-forms"


def fingerprint(*depends_on: object, sources: Iterable[str] = ()) -> str:
    """A digest of ``depends_on`` (their ``repr``: frozen config dataclasses, names) and
    of the source of :data:`FORMS_SOURCES` and ``sources`` (a tokenizer's module; one
    outside our packages is left out) with every module of ours they import."""
    ours = [s for s in sources if s.partition(".")[0] in PACKAGES]
    h = hashlib.sha256(source_digest((*FORMS_SOURCES, *ours), skip=STAMPED_BY_VALUE))
    h.update(repr((_STAMP_EPOCH, depends_on)).encode())
    return h.hexdigest()


def write_forms(directory: str | os.PathLike[str], forms: Forms, *, agent: str,
                ring: KeyRing, fingerprint: str) -> Path:
    """Write ``forms`` atomically, its units' texts left to the shared file
    (:func:`write_unit_forms`, written before it). Blocking: call through the offloader.

    Raises:
        StorageFullError, OSError: as :func:`~solace.sealed.write_private`; the file
            already there is intact.
    """
    rids = sorted(forms.records)
    meta = {
        "version": FORMAT_VERSION, "fingerprint": fingerprint,
        "record_ids": np.array(rids, dtype=np.int64).tobytes(),
        "record_entries": [np.array(forms.records[r][0], dtype=np.int64).tobytes()
                           for r in rids],
        "record_texts": [forms.records[r][1] for r in rids],
        "record_tokens": np.array([forms.records[r][2] for r in rids], dtype=np.int64).tobytes(),
        "unit_ids": np.array(sorted(forms.units), dtype=np.int64).tobytes(),
        "records_index": _pack_index(forms.records_index),
        "units_index": _pack_index(forms.units_index, texts=False),  # the unit texts
    }
    return write_sealed(Path(directory) / NAME, msgpack.packb(meta, use_bin_type=True),
                        ring=ring, purpose=PURPOSE, role=role(agent),
                        what=f"{agent}'s retrieval forms")


def write_unit_forms(directory: str | os.PathLike[str], units: UnitForms, *, ring: KeyRing,
                     fingerprint: str) -> Path:
    """Write every agent's units' texts and tokens (``units``) atomically to
    ``directory``/:data:`UNITS_NAME`. Blocking: call through the offloader.

    Raises:
        StorageFullError, OSError: as :func:`~solace.sealed.write_private`.
    """
    eids = sorted(units)
    meta = {
        "version": FORMAT_VERSION, "fingerprint": fingerprint,
        "unit_ids": np.array(eids, dtype=np.int64).tobytes(),
        "unit_texts": [units[e][0] for e in eids],
        "unit_tokens": np.array([units[e][1] for e in eids], dtype=np.int64).tobytes(),
    }
    return write_sealed(Path(directory) / UNITS_NAME, msgpack.packb(meta, use_bin_type=True),
                        ring=ring, purpose=PURPOSE, role=UNITS_ROLE, what="the units' forms")


def read_unit_forms(directory: str | os.PathLike[str], *, ring: KeyRing, fingerprint: str
                    ) -> UnitForms:
    """The units' texts kept in ``directory`` by :func:`write_unit_forms`; empty when
    there are none, they were made by other code or config, or the file is refused
    (logged). Blocking."""
    meta = _read_meta(Path(directory) / UNITS_NAME, UNITS_ROLE, "the units' forms", ring,
                      fingerprint, (FORMAT_VERSION,))
    if meta is None:
        return {}
    try:
        return _units(meta)
    except (KeyError, TypeError, ValueError) as exc:
        log.warning("the units' forms have a bad field (%r); they are derived again", exc)
        return {}


def read_forms(directory: str | os.PathLike[str], *, agent: str, ring: KeyRing,
               fingerprint: str, units: UnitForms | None = None) -> Forms:
    """The forms kept in ``directory``, their units' texts from ``units`` (what
    :func:`read_unit_forms` read; a format 3 file carries its own); empty when there are
    none, they were made by other code or config, a unit's text is missing, or the
    file is refused (logged). Blocking.

    The forms' ``units`` are then ``units`` itself, not a copy of the part this agent
    holds (at a million events that copy and its merge back cost a second of every
    restart); their units index's texts are ``units``' strings."""
    meta = _read_meta(Path(directory) / NAME, role(agent), f"{agent}: retrieval forms", ring,
                      fingerprint, (FORMAT_VERSION, OWN_TEXTS_VERSION))
    if meta is None:
        return Forms()
    try:
        rids = np.frombuffer(meta["record_ids"], dtype=np.int64).tolist()
        rtok = np.frombuffer(meta["record_tokens"], dtype=np.int64).tolist()
        entries = [tuple(np.frombuffer(b, dtype=np.int64).tolist())
                   for b in meta["record_entries"]]
        if meta["version"] == OWN_TEXTS_VERSION:
            held = _units(meta)
        else:  # the shared forms themselves, once every unit listed is among them
            held = units or {}
            listed = np.frombuffer(meta["unit_ids"], dtype=np.int64).tolist()
            if not all(map(held.__contains__, listed)):
                raise KeyError(next(e for e in listed if e not in held))  # the first
        return Forms(
            records={r: (e, str(t), k) for r, e, t, k in zip(
                rids, entries, meta["record_texts"], rtok, strict=True)},
            units=held,
            records_index=_unpack_index(meta.get("records_index")),
            units_index=_unpack_index(meta.get("units_index"), held),
        )
    except (KeyError, TypeError, ValueError) as exc:
        log.warning("%s: retrieval forms have a bad field or a unit the units' forms lack "
                    "(%r); they are derived again", agent, exc)
        return Forms()


def _read_meta(path: Path, file_role: str, what: str, ring: KeyRing, fingerprint: str,
               versions: tuple[int, ...]) -> dict[str, Any] | None:
    """The unpacked sealed file at ``path``, or None when it is missing, refused, of
    another format (``versions`` are read) or of other code or config (logged)."""
    try:
        meta = msgpack.unpackb(read_sealed(path, ring=ring, purpose=PURPOSE,
                                           role=file_role), raw=False)
    except FileNotFoundError:
        return None
    except (SealedFileRefused, ValueError, msgpack.UnpackException) as exc:
        log.warning("%s refused (%s); they are derived again", what, exc)
        return None
    if not isinstance(meta, dict) or meta.get("version") not in versions \
            or meta.get("fingerprint") != fingerprint:
        log.info("%s are from other code or config; derived again", what)
        return None
    return meta


def _units(meta: dict[str, Any]) -> UnitForms:
    """The units' texts and tokens of a file that carries them."""
    eids = np.frombuffer(meta["unit_ids"], dtype=np.int64).tolist()
    utok = np.frombuffer(meta["unit_tokens"], dtype=np.int64).tolist()
    return {e: (str(t), k) for e, t, k in zip(eids, meta["unit_texts"], utok, strict=True)}
