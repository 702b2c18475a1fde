from __future__ import annotations

import pytest

from solace.models.schema import SchemaError, validate

TOPIC = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "minLength": 1, "maxLength": 10},
        "summary": {"type": "string"},
        "include_in_memory": {"type": "boolean"},
        "mood": {"type": "string", "enum": ["calm", "upset"]},
        "count": {"type": "integer", "minimum": 0},
        "score": {"type": "number", "maximum": 1},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 5}, "maxItems": 2},
    },
    "required": ["title", "include_in_memory"],
    "additionalProperties": False,
}
VALID = {
    "title": "Camping",
    "summary": "went camping",
    "include_in_memory": True,
    "mood": "calm",
    "count": 2,
    "score": 0.5,
    "tags": ["trip"],
}


def test_valid_instance_passes() -> None:
    validate(VALID, TOPIC)
    validate({"title": "x", "include_in_memory": False}, TOPIC)


@pytest.mark.parametrize(
    ("patch", "path"),
    [
        ({"include_in_memory": "true"}, "$.include_in_memory"),
        ({"include_in_memory": 1}, "$.include_in_memory"),
        ({"title": ""}, "$.title"),
        ({"title": "a title that is too long"}, "$.title"),
        ({"title": 3}, "$.title"),
        ({"mood": "angry"}, "$.mood"),
        ({"count": True}, "$.count"),
        ({"count": 1.5}, "$.count"),
        ({"count": -1}, "$.count"),
        ({"score": 2}, "$.score"),
        ({"score": float("nan")}, "$.score"),
        ({"tags": ["a", "b", "c"]}, "$.tags"),
        ({"tags": ["ok", "toolong"]}, "$.tags[1]"),
        ({"tags": "trip"}, "$.tags"),
        ({"extra": 1}, "$.extra"),
        ({"odd key": 1}, "$['odd key']"),
    ],
)
def test_each_failure_names_its_path(patch: dict[str, object], path: str) -> None:
    with pytest.raises(SchemaError) as info:
        validate({**VALID, **patch}, TOPIC)
    assert info.value.path == path
    assert str(info.value).startswith(path + ":")


def test_missing_required_property_names_it() -> None:
    with pytest.raises(SchemaError, match=r"\$\.include_in_memory: required"):
        validate({"title": "x"}, TOPIC)


def test_non_object_root() -> None:
    with pytest.raises(SchemaError, match=r"^\$: expected object, got array"):
        validate([VALID], TOPIC)


def test_schema_error_is_a_value_error() -> None:
    assert issubclass(SchemaError, ValueError)


def test_additional_properties_schema_and_nested_paths() -> None:
    schema = {
        "type": "object",
        "properties": {
            "facts": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"text": {"type": "string"}},
                    "required": ["text"],
                },
            }
        },
        "additionalProperties": {"type": "integer"},
    }
    validate({"facts": [{"text": "a"}], "n": 3}, schema)
    with pytest.raises(SchemaError) as info:
        validate({"facts": [{"text": "a"}, {"text": None}]}, schema)
    assert info.value.path == "$.facts[1].text"
    with pytest.raises(SchemaError) as info:
        validate({"facts": [], "n": "3"}, schema)
    assert info.value.path == "$.n"


def test_enum_is_json_equality() -> None:
    validate(1, {"enum": [1, 2]})
    with pytest.raises(SchemaError):
        validate(True, {"enum": [1, 2]})
    with pytest.raises(SchemaError):
        validate(1, {"enum": [True]})


def test_null_type() -> None:
    validate(None, {"type": "null"})
    with pytest.raises(SchemaError):
        validate(0, {"type": "null"})


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "pattern": "^a"},
        {"type": "object", "items": {}},
        {"type": "date"},
        {"type": ["string", "null"]},
        {"anyOf": [{"type": "string"}]},
    ],
)
def test_unsupported_schema_is_a_programming_error(schema: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="unsupported") as info:
        validate("a", schema)
    assert not isinstance(info.value, SchemaError)


def test_annotations_are_allowed() -> None:
    validate("a", {"type": "string", "title": "T", "description": "D"})
