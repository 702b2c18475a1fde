"""Build frozen config dataclasses from TOML tables, with errors a user can act on.

The loader is generic: it walks a dataclass's fields and the TOML table side by
side, so a new section is one dataclass and nothing else. Every error names the
file, the dotted key and the offending value, because a config error is read by a
person looking at that file.
"""

from __future__ import annotations

import dataclasses
import tomllib
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar, Union, get_args, get_origin

__all__ = ["ConfigError", "build", "read_toml"]

T = TypeVar("T")


class ConfigError(ValueError):
    """Raised while loading configuration: names the file, the key and the bad value."""

    def __init__(self, file: str, key: str, message: str) -> None:
        self.file = file
        self.key = key
        super().__init__(f"{file}: {key}: {message}")


def read_toml(path: str | Path) -> dict[str, Any]:
    """Read a TOML file, turning syntax errors into :class:`ConfigError`."""
    p = Path(path)
    try:
        with p.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(str(p), "<file>", "no such file") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(str(p), "<file>", f"invalid TOML ({exc})") from None


def build(
    cls: type[T], table: Mapping[str, Any], *, file: str, prefix: str = "", base: T | None = None
) -> T:
    """Build dataclass ``cls`` from ``table``; missing keys keep their default.

    Args:
        cls: a dataclass type whose fields carry type hints and defaults.
        table: the TOML table for it.
        file: file name used in error messages.
        prefix: dotted key of ``table`` in the file, for error messages.
        base: an instance whose values stand for missing keys (so a section that
            sets one key of an agent keeps that agent's other defaults).

    Raises:
        ConfigError: for an unknown key, a value of the wrong type, a value outside
            a ``Literal`` set, or a failed ``__post_init__`` check.
    """
    if not isinstance(table, Mapping):
        raise ConfigError(file, prefix or "<root>", f"expected a table, got {table!r}")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    for key in table:
        if key not in fields:
            known = ", ".join(sorted(fields))
            raise ConfigError(file, _join(prefix, key), f"unknown key (known keys: {known})")
    kwargs: dict[str, Any] = {}
    for name, value in table.items():
        current = getattr(base, name) if base is not None else _default(fields[name])
        kwargs[name] = _convert(hints[name], value, file, _join(prefix, name), current)
    try:
        if base is not None:
            return dataclasses.replace(base, **kwargs)  # type: ignore[type-var]
        return cls(**kwargs)
    except ValueError as exc:
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(file, prefix or "<root>", str(exc)) from None


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


def _default(field: Any) -> Any:
    if field.default is not dataclasses.MISSING:
        return field.default
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return None


def _convert(tp: Any, value: Any, file: str, key: str, current: Any = None) -> Any:
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        args = [a for a in get_args(tp) if a is not type(None)]
        if value is None:
            return None
        errors = []
        for arg in args:
            try:
                return _convert(arg, value, file, key)
            except ConfigError as exc:
                errors.append(exc)
        raise errors[0]
    if origin is Literal:
        allowed = get_args(tp)
        if value not in allowed:
            options = " | ".join(repr(a) for a in allowed)
            raise ConfigError(file, key, f"{value!r} is not one of {options}")
        return value
    if dataclasses.is_dataclass(tp):
        base = current if dataclasses.is_dataclass(current) else None
        return build(tp, value, file=file, prefix=key, base=base)  # type: ignore[type-var,arg-type]
    if origin is tuple:
        if not isinstance(value, list | tuple):
            raise ConfigError(file, key, f"expected a list, got {value!r}")
        (item_tp, *_rest) = get_args(tp)
        return tuple(_convert(item_tp, v, file, f"{key}[{i}]") for i, v in enumerate(value))
    if origin in (dict, Mapping) or tp is dict:
        if not isinstance(value, Mapping):
            raise ConfigError(file, key, f"expected a table, got {value!r}")
        _k, v_tp = get_args(tp)
        out = dict(current) if isinstance(current, Mapping) else {}
        for k, v in value.items():
            out[str(k)] = _convert(v_tp, v, file, _join(key, str(k)), out.get(str(k)))
        return types.MappingProxyType(out)
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(file, key, f"expected true or false, got {value!r}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(file, key, f"expected an integer, got {value!r}")
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(file, key, f"expected a number, got {value!r}")
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(file, key, f"expected a string, got {value!r}")
        return value
    raise ConfigError(file, key, f"unsupported config type {tp!r}")  # a bug in a schema
