"""A tiny JSON-schema validator for the subset Solace asks models to fill.

Every LLM output bound for memory is validated before it is used, and a full JSON
Schema library would be a dependency for a dozen keywords. The subset: ``type`` of
object (``properties``, ``required``, ``additionalProperties``), string (``minLength``,
``maxLength``), boolean, integer, number (``minimum``, ``maximum``), array (``items``,
``minItems``, ``maxItems``), null; ``enum`` on any type. Checks are strict: the string
``"true"`` is not a boolean, ``True`` is not an integer, NaN is not a number. A schema
keyword outside the subset is a programming error (``ValueError``), never ignored,
so a schema can never promise more than is checked.

One extension: a schema holding ``"x-lenient": true`` is a *soft* value. A constrained
decoder still sees its type (llama.cpp's grammar compiler and OpenAI-compatible
servers ignore ``x-`` keywords, so a grammar still forces, say, a boolean there), but
the validator accepts any value in its place, or its absence even when ``required``
lists it: the caller reads such a value itself and defaults anything unexpected. The
summary's ``include_in_memory`` is one (seed 000: anything but a strict ``true`` is
false, and only the flag defaults; the title and summary are still used).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

__all__ = ["LENIENT", "SchemaError", "is_lenient", "validate"]

LENIENT = "x-lenient"
"""The keyword that makes a value soft (see the module docstring)."""

_ANNOTATIONS = frozenset(
    {"title", "description", "$schema", "$id", "default", "examples", LENIENT}
)
_KEYWORDS: dict[str, frozenset[str]] = {
    "object": frozenset({"properties", "required", "additionalProperties"}),
    "string": frozenset({"minLength", "maxLength"}),
    "boolean": frozenset(),
    "integer": frozenset({"minimum", "maximum"}),
    "number": frozenset({"minimum", "maximum"}),
    "array": frozenset({"items", "minItems", "maxItems"}),
    "null": frozenset(),
}


class SchemaError(ValueError):
    """Raised by :func:`validate` when an instance does not match its schema.

    Attributes:
        path: JSON path of the failing value, e.g. ``$.facts[2].text``.
    """

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path


def _is_type(value: object, type_name: str) -> bool:
    if type_name == "object":
        return isinstance(value, dict)
    if type_name == "string":
        return isinstance(value, str)
    if type_name == "boolean":
        return isinstance(value, bool)
    if type_name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if type_name == "number":
        return (
            isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
        )
    if type_name == "array":
        return isinstance(value, list)
    return value is None  # "null"


def is_lenient(schema: Mapping[str, Any]) -> bool:
    """True if ``schema`` marks a soft value (``"x-lenient": true``).

    Raises:
        ValueError: ``x-lenient`` holds anything but a boolean.
    """
    flag = schema.get(LENIENT, False)
    if not isinstance(flag, bool):
        raise ValueError(f"{LENIENT} must be a boolean, got {flag!r}")
    return flag


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if key.isidentifier() else f"{path}[{key!r}]"


def validate(instance: object, schema: Mapping[str, Any], _path: str = "$") -> None:
    """Check ``instance`` against ``schema``; return None if it matches.

    Args:
        instance: a value decoded from JSON (dict, list, str, int, float, bool, None).
        schema: a JSON schema using only the supported subset (see module docstring).

    Raises:
        SchemaError: the first mismatch found, depth-first in schema order; its
            ``path`` names the failing value. A soft value (``x-lenient``) never
            fails, present, absent or of any type.
        ValueError: the schema itself uses an unsupported keyword or type.
    """
    type_name = schema.get("type")
    if type_name is not None and (not isinstance(type_name, str) or type_name not in _KEYWORDS):
        raise ValueError(f"unsupported schema type {type_name!r} at {_path}")
    allowed = _ANNOTATIONS | {"type", "enum"} | _KEYWORDS.get(type_name or "", frozenset())
    unknown = sorted(set(schema) - allowed)
    if unknown:
        raise ValueError(f"unsupported schema keyword(s) {unknown} at {_path}")
    if is_lenient(schema):
        return  # a soft value: its reader defaults anything unexpected

    if type_name is not None and not _is_type(instance, type_name):
        raise SchemaError(_path, f"expected {type_name}, got {_describe(instance)}")
    if "enum" in schema and not any(_same(instance, e) for e in schema["enum"]):
        raise SchemaError(_path, f"{_describe(instance)} is not one of {list(schema['enum'])}")

    if isinstance(instance, dict) and type_name == "object":
        _validate_object(instance, schema, _path)
    elif isinstance(instance, str):
        _check_bounds(len(instance), schema, "minLength", "maxLength", "length", _path)
    elif isinstance(instance, int | float) and not isinstance(instance, bool):
        _check_bounds(instance, schema, "minimum", "maximum", "value", _path)
    elif isinstance(instance, list):
        _check_bounds(len(instance), schema, "minItems", "maxItems", "item count", _path)
        items = schema.get("items")
        if items is not None:
            for i, item in enumerate(instance):
                validate(item, items, f"{_path}[{i}]")


def _validate_object(instance: dict[str, Any], schema: Mapping[str, Any], path: str) -> None:
    properties: Mapping[str, Any] = schema.get("properties", {})
    for key in schema.get("required", ()):
        if key not in instance and not is_lenient(properties.get(key, {})):
            raise SchemaError(_child(path, key), "required property is missing")
    extra = schema.get("additionalProperties", True)
    for key, value in instance.items():
        if key in properties:
            validate(value, properties[key], _child(path, key))
        elif extra is False:
            raise SchemaError(_child(path, key), "property is not allowed")
        elif isinstance(extra, Mapping):
            validate(value, extra, _child(path, key))


def _check_bounds(
    value: float, schema: Mapping[str, Any], low_key: str, high_key: str, what: str, path: str
) -> None:
    low = schema.get(low_key)
    if low is not None and value < low:
        raise SchemaError(path, f"{what} {value} is below {low_key} {low}")
    high = schema.get(high_key)
    if high is not None and value > high:
        raise SchemaError(path, f"{what} {value} is above {high_key} {high}")


def _same(a: object, b: object) -> bool:
    """JSON equality: ``True`` is not ``1``."""
    return type(a) is type(b) and a == b if isinstance(a, bool) or isinstance(b, bool) else a == b


def _describe(value: object) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}
    kind = names.get(type(value), type(value).__name__)
    text = repr(value)
    return f"{kind} {text[:40]}{'...' if len(text) > 40 else ''}"
