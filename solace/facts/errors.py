"""Fact memory's errors: one hierarchy, each message naming the bad value."""

from __future__ import annotations

__all__ = [
    "FactMemoryError",
    "FactVaultError",
    "FactsDisabledError",
    "InvalidFactError",
    "InvalidMemoryIdError",
    "UnknownFactIdError",
    "UnknownStoreError",
]


class FactMemoryError(Exception):
    """Base of every error this package raises."""


class InvalidMemoryIdError(FactMemoryError, ValueError):
    """A memory id that breaks the rule (1 to 128 letters, digits, '-' or '_')."""


class UnknownStoreError(FactMemoryError, ValueError):
    """A store name no ``[stores.NAME]`` table (nor the default) defines."""


class InvalidFactError(FactMemoryError, ValueError):
    """A fact text or importance that cannot be stored (empty, too long, out of range)."""


class UnknownFactIdError(FactMemoryError, KeyError):
    """A fact id the memory id does not hold."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class FactsDisabledError(FactMemoryError):
    """Fact memory is switched off (``[facts] enabled = false``)."""


class FactVaultError(FactMemoryError):
    """The fact key vault under the home cannot be read: facts cannot be decrypted."""
