"""Durable facts: key-value entries per (user, agent, org), never summarised.

Facts are for what must always be exactly right and always present (entity
references, configuration values, identity, standing decisions); they are injected
into the stable prefix at full fidelity. Operations are the ``important_info``
tool's: ``$set`` (create or replace by key), ``read`` (all or by key), ``$unset``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from solace.conversation import events
from solace.conversation.errors import InvalidArgumentError, UnknownFactError
from solace.conversation.events import Draft
from solace.conversation.model import Fact, Scope

__all__ = ["MAX_KEY_LENGTH", "fact_value", "render_facts", "set_fact", "unset_fact"]

MAX_KEY_LENGTH = 128


def _check_key(key: object) -> str:
    if not isinstance(key, str) or not key.strip():
        raise InvalidArgumentError(f"a durable fact needs a non-empty key, got {key!r}")
    if len(key) > MAX_KEY_LENGTH or "\n" in key:
        raise InvalidArgumentError(
            f"durable fact key {key[:40]!r} is too long or has a line break "
            f"(at most {MAX_KEY_LENGTH} characters, one line)"
        )
    return key.strip()


def fact_value(value: object) -> str:
    """The stored text of ``value``: strings as-is, other JSON values as JSON.

    Raises:
        InvalidArgumentError: ``value`` is None or an empty string (use ``$unset`` to delete).
    """
    if value is None or value == "":
        raise InvalidArgumentError("a durable fact needs a value (use $unset to delete one)")
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def set_fact(scope: Scope, key: object, value: object) -> Draft:
    """The event that creates or replaces fact ``key``.

    Raises:
        InvalidArgumentError: an empty or overlong key, or an empty value; the message names it.
    """
    return events.fact_set(scope, _check_key(key), fact_value(value))


def unset_fact(scope: Scope, key: object, facts: Mapping[str, Fact]) -> Draft:
    """The event that deletes fact ``key``.

    Raises:
        UnknownFactError: there is no such fact (the message names the key and the known ones).
    """
    key = _check_key(key)
    if key not in facts:
        known = ", ".join(sorted(facts)) or "none"
        raise UnknownFactError(f"no durable fact {key!r} (known keys: {known})")
    return events.fact_unset(scope, key)


def render_facts(facts: Mapping[str, Fact]) -> str:
    """Facts as prompt lines, sorted by key (byte-identical while they do not change)."""
    return "\n".join(f"- {key}: {facts[key].value}" for key in sorted(facts))
