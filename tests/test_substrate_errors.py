"""Errors: one flat family under SubstrateError, each documented, none shadowing builtins."""

from __future__ import annotations

import builtins

import substrate.errors as errors
from substrate.errors import InvalidEventError, SubstrateError, UnknownEntryError


def test_every_error_is_a_documented_substrate_error_with_a_fresh_name() -> None:
    for name in errors.__all__:
        cls = getattr(errors, name)
        assert issubclass(cls, SubstrateError) and cls.__doc__
        assert not hasattr(builtins, name)


def test_invalid_events_are_value_errors_and_unknown_entries_are_key_errors() -> None:
    assert issubclass(InvalidEventError, ValueError)
    assert issubclass(UnknownEntryError, KeyError)
    assert str(UnknownEntryError("entry 5 was never written")) == "entry 5 was never written"
