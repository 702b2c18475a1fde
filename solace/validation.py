"""What a public ``observe`` accepts: one pure check, run before anything changes.

``Runtime.observe`` and ``Runtime.observe_many`` (and so ``Actor.observe``) call
:func:`check_observation` on every item *before* they touch the clock, the substrate
or any tier, so a refused call leaves no trace: the clock has not moved, no event was
appended, no record was made. The check returns the values normalised (the instant as
epoch seconds, attrs and tags copied), so nothing the caller mutates afterwards can
change what is written.

The rules, each refused with a message naming the field and the value:

* ``text``: a ``str`` with at least one non-whitespace character (whitespace-only text
  would be stored but could never be recalled), and only characters the substrate's
  XML can carry. It is kept exactly as given (never stripped).
* ``speaker``: a ``str`` of 1..:data:`MAX_SPEAKER_CHARS` characters, not blank, with no
  leading or trailing whitespace and no control or line-separator character. A
  speaker is copied into record text (``"Bob: ..."``), so a newline in it could forge a
  line of another speaker.
* ``kind``: one of the public kinds the runtime passes in. Internal kinds (``fade``,
  the actors' ``draft`` and ``mood``, the conversation layer's ``session``, ``topic``,
  ``note``) belong to internal writers; the message lists the accepted kinds.
* ``at``: None, a ``datetime`` (naive means UTC) or epoch seconds, finite and within
  1970-01-01..9999-12-31 (:func:`solace.clock.check_instant`).
* ``attrs``: None or a mapping of ``str`` to ``str`` (a string such as ``"k=v"`` is
  refused), keys non-empty, every key and value XML-safe.
* ``emotional_weight``: None or a real number within [0, 1].
* ``tags``: a sequence of non-blank ``str`` (a bare ``str`` is refused: it would
  become one tag per letter), each free of control characters.
"""

from __future__ import annotations

import math
import numbers
import unicodedata
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from solace.clock import check_instant
from substrate.xmlcodec import find_illegal_char

__all__ = [
    "MAX_SPEAKER_CHARS",
    "CheckedObservation",
    "InvalidObservationError",
    "ObservationTypeError",
    "check_observation",
    "check_speaker",
    "check_text",
    "public_kinds",
]

#: The longest speaker name accepted (it names an event's author and prefixes records).
MAX_SPEAKER_CHARS = 128

# Characters that break a line or are invisible controls: never in a speaker or a tag.
_LINE_BREAKS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")


class InvalidObservationError(ValueError):
    """Raised by :func:`check_observation` (so by ``observe``) when a field's value is
    refused; the message names the field and the value. Nothing was written."""


class ObservationTypeError(InvalidObservationError, TypeError):
    """Raised by :func:`check_observation` when a field has the wrong type (also a
    ``TypeError``); the message names the field, the type and the value."""


@dataclass(frozen=True, slots=True)
class CheckedObservation:
    """The normalised values of one accepted observation.

    Attributes:
        text: exactly as given. speaker: exactly as given (None if None was given).
        kind: a public kind. ts: epoch seconds, or None for "the clock's now".
        attrs: a read-only copy, or None. emotional_weight: a float in [0, 1], or None.
        tags: a tuple copy.
    """

    text: str
    speaker: str | None
    kind: str
    ts: float | None
    attrs: Mapping[str, str] | None
    emotional_weight: float | None
    tags: tuple[str, ...]


def public_kinds(kinds: Iterable[str], internal: Iterable[str]) -> frozenset[str]:
    """The kinds a public ``observe`` accepts: ``kinds`` less the ``internal`` ones."""
    return frozenset(kinds) - frozenset(internal)


def check_observation(
    text: object,
    *,
    speaker: object,
    kind: object,
    at: object,
    attrs: object,
    emotional_weight: object,
    tags: object,
    kinds: Collection[str],
) -> CheckedObservation:
    """Check one observation's fields and return them normalised; pure, no side effect.

    Args:
        text, speaker, kind, at, attrs, emotional_weight, tags: as given to
            ``observe`` (``speaker`` None means "the observing actor"; see the module
            docstring for each rule).
        kinds: the kinds accepted here (see :func:`public_kinds`).

    Returns:
        The accepted values (see :class:`CheckedObservation`).

    Raises:
        ObservationTypeError: a field has the wrong type.
        InvalidObservationError: a field's value is refused.
    """
    return CheckedObservation(
        text=_text(text),
        speaker=None if speaker is None else check_speaker(speaker),
        kind=_kind(kind, kinds),
        ts=None if at is None else _instant(at),
        attrs=None if attrs is None else _attrs(attrs),
        emotional_weight=None if emotional_weight is None else _weight(emotional_weight),
        tags=_tags(tags),
    )


def check_speaker(speaker: object, *, field: str = "speaker") -> str:
    """``speaker`` if it is a usable name (see the module docstring), else raise."""
    if not isinstance(speaker, str):
        raise ObservationTypeError(
            f"{field} must be a str, got {type(speaker).__name__}: {speaker!r}"
        )
    if not speaker.strip():
        raise InvalidObservationError(f"{field} must not be empty or blank, got {speaker!r}")
    if len(speaker) > MAX_SPEAKER_CHARS:
        raise InvalidObservationError(
            f"{field} must have at most {MAX_SPEAKER_CHARS} characters, "
            f"got {len(speaker)}: {speaker[:40]!r}..."
        )
    if speaker != speaker.strip():
        raise InvalidObservationError(
            f"{field} must not start or end with whitespace, got {speaker!r}"
        )
    bad = _control_at(speaker)
    if bad is not None:
        raise InvalidObservationError(
            f"{field} must be one line without control characters, got {speaker!r} "
            f"(U+{ord(speaker[bad]):04X} at index {bad})"
        )
    return speaker


def check_text(text: object) -> str:
    """``text`` if it can be stored and recalled: a str holding something besides
    whitespace and no character the substrate's XML cannot carry.

    Raises:
        InvalidObservationError: naming the value (``ObservationTypeError`` if not a str).
    """
    return _text(text)


def _text(text: object) -> str:
    if not isinstance(text, str):
        raise ObservationTypeError(f"text must be a str, got {type(text).__name__}: {text!r}")
    if not text.strip():
        raise InvalidObservationError(
            f"text must hold something besides whitespace (it could never be recalled), "
            f"got {text!r}"
        )
    _xml_safe("text", text)
    return text


def _kind(kind: object, kinds: Collection[str]) -> str:
    if not isinstance(kind, str):
        raise ObservationTypeError(f"kind must be a str, got {type(kind).__name__}: {kind!r}")
    if kind not in kinds:
        raise InvalidObservationError(
            f"kind {kind!r} cannot be observed; accepted kinds are {', '.join(sorted(kinds))}"
        )
    return kind


def _instant(at: object) -> float:
    try:
        return check_instant(at, name="at")
    except TypeError as exc:
        raise ObservationTypeError(str(exc)) from None
    except ValueError as exc:
        raise InvalidObservationError(str(exc)) from None


def _attrs(attrs: object) -> Mapping[str, str]:
    if not isinstance(attrs, Mapping):
        raise ObservationTypeError(
            f"attrs must be a mapping of str to str, got {type(attrs).__name__}: {attrs!r}"
        )
    copy: dict[str, str] = {}
    for key, value in attrs.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise ObservationTypeError(
                f"attrs must map str to str, got {type(key).__name__} {key!r} -> "
                f"{type(value).__name__} {value!r}"
            )
        if not key:
            raise InvalidObservationError(f"attrs keys must not be empty, got {attrs!r}")
        _xml_safe(f"attrs key {key!r}", key)
        _xml_safe(f"attrs[{key!r}]", value)
        copy[key] = value
    return MappingProxyType(copy)


def _weight(weight: object) -> float:
    if isinstance(weight, bool) or not isinstance(weight, numbers.Real):
        raise ObservationTypeError(
            f"emotional_weight must be a number, got {type(weight).__name__}: {weight!r}"
        )
    value = float(weight)
    if not (math.isfinite(value) and 0.0 <= value <= 1.0):
        raise InvalidObservationError(f"emotional_weight must be within [0, 1], got {weight!r}")
    return value


def _tags(tags: object) -> tuple[str, ...]:
    if isinstance(tags, str | bytes) or not isinstance(tags, Iterable):
        raise ObservationTypeError(
            f"tags must be a sequence of str (not a bare string), "
            f"got {type(tags).__name__}: {tags!r}"
        )
    out = tuple(tags)
    for tag in out:
        if not isinstance(tag, str):
            raise ObservationTypeError(
                f"tags must be str, got {type(tag).__name__}: {tag!r} in {out!r}"
            )
        if not tag.strip() or _control_at(tag) is not None:
            raise InvalidObservationError(
                f"each tag must be non-blank and one line without control characters, "
                f"got {tag!r}"
            )
    return out


def _xml_safe(field: str, value: str) -> None:
    found = find_illegal_char(value)
    if found is not None:
        raise InvalidObservationError(
            f"{field} holds U+{found[1]:04X} at index {found[0]}, which the substrate "
            f"cannot store (C0 controls other than TAB/LF/CR, lone surrogates, "
            f"U+FFFE/U+FFFF): {value[:60]!r}"
        )


def _control_at(value: str) -> int | None:
    """Index of the first line break or control/format character of ``value``, else None."""
    for i, ch in enumerate(value):
        if ch in _LINE_BREAKS or unicodedata.category(ch) in ("Cc", "Zl", "Zp"):
            return i
    return None
