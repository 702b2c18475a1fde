"""Surfaces: thin adapters between a person (or a program) and the runtime.

``solace.surfaces.repl`` is the line-oriented REPL of ``solace run``. Surfaces hold
no memory logic of their own; they format what the runtime and its conversation
layer return.
"""

from __future__ import annotations
