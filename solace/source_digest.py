"""A digest of the source code a computation can reach, to stamp caches of what it derived.

A cache of derived data (an agent's retrieval forms: texts rebuilt from events by the
ladder's rungs and indexed by BM25) is only valid for the code that derived it. Stamping
it with a digest of the whole package drops it on *any* edit, and deriving the forms
again costs minutes on a large home. :func:`source_digest` digests only the modules the
derivation can reach: the entry modules and, transitively, every module of ours they
import.

Imports are read statically (``ast``), function-local ones included. ``from pkg import
name``, where ``pkg``'s ``__init__`` re-exports ``name`` from a submodule, is followed to
that submodule, not to the ``__init__`` (whose other imports would pull in the whole
package). A module counts by its syntax tree without docstrings, so an edit to
comments, layout or docstrings keeps the digest. Modules named in ``skip`` are neither
digested nor followed: for code whose effect the cache stamps another way (the config
classes, whose values are stamped as they are). Code reached only through
``importlib`` is not seen; the modules stamped today
have none (a test checks). Pure functions; the files are read once per process.
"""

from __future__ import annotations

import ast
import functools
import hashlib
from collections.abc import Iterable, Iterator
from pathlib import Path

__all__ = ["PACKAGES", "SOURCE_ROOT", "source_closure", "source_digest"]

#: The directory holding our top-level packages (the repository's root).
SOURCE_ROOT = Path(__file__).resolve().parents[1]
#: The top-level packages whose modules are followed; imports of anything else are not.
PACKAGES = ("solace", "substrate")


def source_closure(entries: Iterable[str], *, root: Path = SOURCE_ROOT,
                   packages: Iterable[str] = PACKAGES, skip: Iterable[str] = ()) -> list[str]:
    """The dotted names of ``entries`` and of every module of ``packages`` they import,
    transitively, sorted; the modules in ``skip`` are left out and not followed.

    Raises:
        ValueError: an entry is not a module under ``root``.
    """
    ours = frozenset(packages)
    todo = list(entries)
    for name in todo:
        if _path_of(root, name) is None:
            raise ValueError(f"{name!r} is not a module under {root}")
    seen: set[str] = set()
    skipped = frozenset(skip)
    while todo:
        name = todo.pop()
        if name in seen or name in skipped or _path_of(root, name) is None:
            continue
        seen.add(name)
        for base, imported in _imports(root, name):
            if base.partition(".")[0] in ours:
                todo.append(base if imported is None else _origin(root, ours, base, imported))
    return sorted(seen)


def source_digest(entries: Iterable[str], *, root: Path = SOURCE_ROOT,
                  packages: Iterable[str] = PACKAGES, skip: Iterable[str] = ()) -> bytes:
    """SHA-256 over the names and the syntax trees (docstrings dropped) of
    :func:`source_closure`'s modules."""
    return _digest(tuple(entries), root, tuple(packages), tuple(sorted(skip)))


@functools.cache
def _digest(entries: tuple[str, ...], root: Path, packages: tuple[str, ...],
            skip: tuple[str, ...]) -> bytes:
    h = hashlib.sha256()
    for name in source_closure(entries, root=root, packages=packages, skip=skip):
        path = _path_of(root, name)
        assert path is not None  # source_closure keeps only modules that exist
        h.update(name.encode() + b"\0")
        h.update(ast.dump(_tree(path)).encode() + b"\0")
    return h.digest()


def _path_of(root: Path, name: str) -> Path | None:
    """The file of module ``name`` (a package's ``__init__.py``), None if there is none."""
    base = root.joinpath(*name.split("."))
    for path in (base / "__init__.py", base.with_suffix(".py")):
        if path.is_file():
            return path
    return None


def _imports(root: Path, name: str) -> list[tuple[str, str | None]]:
    """``(module, None)`` for each ``import module`` in ``name``'s source and
    ``(module, imported name)`` for each ``from module import name``, relative ones
    resolved."""
    path = _path_of(root, name)
    assert path is not None
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: list[tuple[str, str | None]] = []
    for node in _statements(_tree(path).body):
        if isinstance(node, ast.Import):
            out.extend((alias.name, None) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(package, node.level, node.module)
            out.extend((base, alias.name) for alias in node.names)
    return out


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement of ``body``, nested ones (in functions, classes, ``if``, ``try``,
    ``with``, loops) included; expressions are not visited (an import is a statement)."""
    for node in body:
        yield node
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            inner = getattr(node, name, None)
            if isinstance(inner, list):
                yield from _statements(inner)


@functools.cache
def _tree(path: Path) -> ast.Module:
    """``path``'s syntax tree without docstrings (comments, layout and docstrings do
    not change what the code does, so they do not change the digest)."""
    tree = ast.parse(path.read_bytes(), filename=str(path))
    for node in [tree, *_statements(tree.body)]:
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(
                    body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
    return tree


def _absolute(package: str, level: int, module: str | None) -> str:
    if not level:
        return module or ""
    parts = package.split(".")[: len(package.split(".")) - level + 1]
    return ".".join([*parts, module] if module else parts)


def _origin(root: Path, ours: frozenset[str], module: str, name: str,
            depth: int = 0) -> str:
    """The module that ``from module import name`` reaches: the submodule ``name``, the
    module ``name`` is re-exported from (through a package's ``__init__``), or
    ``module`` itself."""
    if _path_of(root, f"{module}.{name}") is not None:
        return f"{module}.{name}"
    path = _path_of(root, module)
    if path is None or path.name != "__init__.py" or depth > 8:
        return module
    for node in _tree(path).body:
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if (alias.asname or alias.name) == name:
                    base = _absolute(module, node.level, node.module)
                    if base.partition(".")[0] in ours:
                        return _origin(root, ours, base, alias.name, depth + 1)
    return module
