"""The HTTP surface's endpoint table: one entry per operation, the one source of truth.

Each :class:`Endpoint` holds the JSON Schemas of its body and query parameters. The
same dicts validate every request (:func:`check`, through the project's own
validator :func:`solace.models.schema.validate`) and make the OpenAPI 3.1 document
(:func:`openapi_document`), so the document can never promise a check that is not
made, nor omit one that is.

The validator knows a subset of JSON Schema; this module adds exactly one keyword on
top, ``pattern`` on strings (anchored regular expressions), checked here after the
subset has passed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from solace.actors.routing import ACTORS
from solace.app.api import CURATIONS, MAX_RECALL_TAGS
from solace.app.console import AGENT_CURATIONS
from solace.conversation.model import EXIT_TRIGGERS
from solace.facts.service import MAX_FACT_CHARS
from solace.models.schema import SchemaError, validate
from solace.validation import MAX_SPEAKER_CHARS
from substrate.xmlcodec import find_illegal_char

__all__ = [
    "ENDPOINTS",
    "MEMORY_ID_PATTERN",
    "MEMORY_ID_RULE",
    "TEXT_PATTERN",
    "Access",
    "Endpoint",
    "check",
    "openapi_document",
    "path_schema",
]

MEMORY_ID_PATTERN = "^[A-Za-z0-9_-]{1,128}$"
"""Seed 001's memory ids: letters, digits, ``-`` and ``_``, 1 to 128 of them."""
MEMORY_ID_RULE = "1 to 128 letters, digits, '-' or '_'"

Access = Literal["public", "admin", "memory"]
"""Who may call: anyone; the admin token only; a token in scope of the memory named."""

_MEMORY_NOTE = (
    "Memory ids (seed 001) select fact memory: /memory/{memory_id}/... reads and writes "
    "that id's facts, and POST /chat with \"memory\" recalls that id's facts before the "
    "turn and files what the turn taught under it (in \"memory_store\", else the agent's "
    "store, else default). With fact memory switched off ([facts] enabled = false) the "
    "/memory endpoints answer 503 facts_disabled and /chat proceeds without memory."
)

_ILLEGAL = r"\u0000-\u0008\u000b\u000c\u000e-\u001f\ud800-\udfff\ufffe\uffff"
TEXT_PATTERN = rf"^[^{_ILLEGAL}]*[^\s{_ILLEGAL}][^{_ILLEGAL}]*$"
"""Text the substrate can store (XML 1.0 characters) with one non-whitespace character."""
TEXT_RULE = ("at least one non-whitespace character, and none the substrate cannot store "
             "(C0 controls other than TAB/LF/CR, lone surrogates, U+FFFE/U+FFFF)")

_MEMORY_ID: dict[str, Any] = {
    "type": "string", "pattern": MEMORY_ID_PATTERN, "description": MEMORY_ID_RULE,
}
_TEXT: dict[str, Any] = {"type": "string", "minLength": 1, "maxLength": 100_000,
                         "pattern": TEXT_PATTERN, "description": TEXT_RULE}
_NAME: dict[str, Any] = {"type": "string", "minLength": 1, "maxLength": MAX_SPEAKER_CHARS,
                         "pattern": TEXT_PATTERN, "description": TEXT_RULE}
_PARAM: dict[str, Any] = {"type": "string", "minLength": 1, "maxLength": 128,
                          "pattern": TEXT_PATTERN, "description": TEXT_RULE}
_ENTRY_ID: dict[str, Any] = {"type": "string", "pattern": "^[1-9][0-9]{0,17}$",
                             "description": "an entry id: a positive integer"}
_AGENT: dict[str, Any] = {"type": "string", "enum": list(ACTORS), "default": "Main"}
_SESSION_TYPE: dict[str, Any] = {
    "type": "string", "enum": ["main", "shared"],
    "description": "shared: this turn sees no private memory (MEMORY.md, durable facts, "
                   "fact recall); main is refused by a process serving shared sessions. "
                   "Absent: the process's own type."}
_STORE: dict[str, Any] = {"type": "string", "minLength": 1, "maxLength": 128,
                          "pattern": TEXT_PATTERN,
                          "description": "a store: [stores.NAME] in the config, or default"}
_FACT: dict[str, Any] = {**_TEXT, "maxLength": MAX_FACT_CHARS}
_IMPORTANCE: dict[str, Any] = {"type": "number", "minimum": 0, "maximum": 1,
                               "description": "0..1 (default 0.5)"}


def _object(required: tuple[str, ...] = (), **properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required),
            "additionalProperties": False}


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One operation of the HTTP surface.

    Attributes:
        method, path: as routed (path parameters in braces).
        name: the OpenAPI ``operationId``.
        summary: one line for the document.
        access: who may call it (see :data:`Access`).
        body: JSON Schema of the request body (None: no body).
        query: JSON Schema (an object of strings/integers) of the query parameters.
        ok: the success status code.
        text: the success response is ``text/plain`` (``/metrics``), not JSON.
    """

    method: str
    path: str
    name: str
    summary: str
    access: Access
    body: dict[str, Any] | None = None
    query: dict[str, Any] | None = None
    ok: int = 200
    text: bool = False
    description: str = ""
    params: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", tuple(re.findall(r"{(\w+)}", self.path)))


_RECALL_BODY = _object(
    ("query",), query=_TEXT, agent=_AGENT,
    k={"type": "integer", "minimum": 1, "maximum": 1000, "default": 10},
    tags={"type": "array", "items": _NAME, "maxItems": MAX_RECALL_TAGS,
          "description": "narrow long-term search to records carrying any of these tags "
                         "(casefolded); working records still compete, scored by the "
                         "tags they carry"},
)
_RECALL_QUERY = _object(
    ("query",), query=_TEXT, agent=_AGENT,
    k={"type": "integer", "minimum": 1, "maximum": 1000, "default": 10},
)

ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint("GET", "/healthz", "healthz", "Liveness: 200 while the runtime runs", "public"),
    Endpoint("GET", "/openapi.json", "openapi", "This document", "public"),
    Endpoint("GET", "/metrics", "metrics", "Prometheus text-format metrics", "admin", text=True),
    Endpoint(
        "POST", "/chat", "chat", "One chat turn: Main answers, Mouth says what may be said",
        "memory", description=_MEMORY_NOTE,
        body=_object(("message",), message=_TEXT, memory=_MEMORY_ID, memory_store=_MEMORY_ID,
                     session_type=_SESSION_TYPE),
    ),
    Endpoint(
        "POST", "/observe", "observe", "Append one event and deliver it to the agents",
        "admin", ok=201,
        body=_object(
            ("text", "speaker"), text=_TEXT, speaker=_NAME,
            kind={"type": "string", "enum": ["message", "reflection", "cue", "tool_call",
                                             "tool_result"], "default": "message"},
            at={"type": "number", "minimum": 0, "maximum": 32503680000,
                "description": "epoch seconds (default: now)"},
            attrs={"type": "object", "additionalProperties": {"type": "string",
                                                              "maxLength": 1000}},
            emotional_weight={"type": "number", "minimum": 0, "maximum": 1},
            tags={"type": "array", "items": _NAME, "maxItems": 32},
        ),
    ),
    Endpoint("GET", "/recall", "recall_get", "Recall with citations (query string)", "admin",
             query=_RECALL_QUERY),
    Endpoint("POST", "/recall", "recall", "Recall with citations", "admin", body=_RECALL_BODY),
    Endpoint("GET", "/topics", "topics", "The scope's topics, oldest first", "admin"),
    Endpoint("POST", "/topics/{topic_id}/curate", "curate", "The user's curation move", "admin",
             body=_object(("action",), action={"type": "string", "enum": list(CURATIONS)})),
    Endpoint("GET", "/topics/{topic_id}", "topic",
             "One topic in full: state, summary, notes and thread", "admin"),
    Endpoint("GET", "/topics/{topic_id}/notes", "notes",
             "A topic's notes (active, and archived oldest first)", "admin"),
    Endpoint("POST", "/topics/{topic_id}/notes", "add_note", "Append a line to a topic's notes",
             "admin", body=_object(("text",), text=_TEXT)),
    Endpoint("PUT", "/topics/{topic_id}/notes", "replace_notes",
             "Replace a topic's active notes", "admin",
             body=_object(("text",), text=_TEXT)),
    Endpoint("GET", "/facts", "facts", "Durable facts, by key", "admin"),
    Endpoint("GET", "/facts/{key}", "fact", "One durable fact", "admin"),
    Endpoint("PUT", "/facts/{key}", "set_fact", "Create or replace a durable fact", "admin",
             body=_object(("value",), value=_TEXT)),
    Endpoint("DELETE", "/facts/{key}", "unset_fact", "Delete a durable fact", "admin"),
    Endpoint("GET", "/inspect", "inspect", "Per-agent memory stats", "admin",
             query=_object((), agent={"type": "string", "enum": list(ACTORS)})),
    Endpoint("GET", "/stats", "stats", "Events and records per agent", "admin"),
    Endpoint(
        "POST", "/sessions/{session_id}/evaluate", "evaluate",
        "Seed 000's evaluation: exit triggers are debounced (2 s), manual runs now", "admin",
        ok=202,
        body=_object(("trigger",), trigger={"type": "string",
                                            "enum": ["manual", *EXIT_TRIGGERS]}),
    ),
    Endpoint("GET", "/memory", "memory_ids", "The memory ids holding facts", "admin",
             query=_object((), store=_STORE)),
    Endpoint("POST", "/memory/import", "memory_import",
             "Import facts into a store: each row classified, no extraction", "admin",
             body=_object(("store", "rows"), store=_STORE, rows={
                 "type": "array", "minItems": 1, "maxItems": 10_000,
                 "items": _object(("memory_id", "text"), memory_id=_MEMORY_ID, text=_FACT,
                                  importance=_IMPORTANCE, slot=_PARAM,
                                  at={"type": "number", "minimum": 0, "maximum": 32503680000,
                                      "description": "when it was stated, epoch seconds"})})),
    Endpoint("POST", "/memory/{memory_id}/remember", "memory_remember",
             "Write one fact (classified ADD/UPDATE/NOOP/CONFLICT)", "memory",
             body=_object(("text",), text=_FACT, store=_STORE, importance=_IMPORTANCE)),
    Endpoint("POST", "/memory/{memory_id}/recall", "memory_recall",
             "The facts best matching a query, scored, and their hidden-context block",
             "memory",
             body=_object(("query",), query=_TEXT, store=_STORE,
                          k={"type": "integer", "minimum": 1, "maximum": 1000})),
    Endpoint("GET", "/memory/{memory_id}/facts", "memory_facts",
             "A memory id's facts (all=true: history too)", "admin",
             query=_object((), all={"type": "string", "enum": ["true", "false"]})),
    Endpoint("DELETE", "/memory/{memory_id}/facts/{fact_id}", "memory_delete",
             "Delete one fact for good (its key is destroyed)", "admin"),
    Endpoint("DELETE", "/memory/{memory_id}", "memory_forget",
             "Forget every fact of a memory id for good", "admin"),
    Endpoint("POST", "/memory/{memory_id}/consolidate", "memory_consolidate",
             "Compact a memory id's live facts now", "admin"),
    Endpoint("GET", "/memory/{memory_id}/export", "memory_export",
             "Every fact of a memory id, history included", "admin"),
    # The web console's reads (solace.app.console); any client may use them.
    Endpoint("GET", "/context/memory", "memory_prefix",
             "The memory prefix: promoted topics' summaries, deprecated ones as "
             "'[DEPRECATED] title'", "admin"),
    Endpoint("POST", "/topics/{topic_id}/agent-curate", "agent_curate",
             "The agent's manage_topic_memory move, through the user-decision guard "
             "(refused: ok false and the guard's message)", "admin",
             body=_object(("action",), action={"type": "string",
                                               "enum": list(AGENT_CURATIONS)})),
    Endpoint("GET", "/events/{entry_id}", "event", "One substrate event, its text as appended",
             "admin"),
    Endpoint("GET", "/substrate/verify", "substrate_verify",
             "Re-read and check every frame, the hash chain and the anchor", "admin"),
    Endpoint("POST", "/import", "import_batches",
             "Import keyed lines into the served home: a line already held is skipped, a "
             "batch is one atomic write, distilled as lived (solace import while serving)",
             "admin", body=_object(("batches",), batches={
                 "type": "array", "minItems": 1, "maxItems": 256, "items": {
                     "type": "array", "minItems": 1, "maxItems": 256,
                     "items": _object(("key", "speaker", "text", "at"),
                                      key={**_PARAM, "maxLength": 512}, speaker=_NAME,
                                      text=_TEXT,
                                      at={"type": "number", "minimum": 0,
                                          "maximum": 32503680000},
                                      attrs={"type": "object", "additionalProperties": {
                                          "type": "string", "maxLength": 1000}})}})),
    Endpoint("GET", "/workspace", "workspace_files",
             "The markdown workspace's files with their sizes", "admin"),
    Endpoint("GET", "/workspace/file", "workspace_file",
             "One workspace file's text (a path relative to the workspace, .md optional)",
             "admin", query=_object(("path",), path={"type": "string", "minLength": 1,
                                                     "maxLength": 1024})),
    Endpoint("POST", "/workspace/reload", "workspace_reload",
             "Record the human's edits of the workspace; Main's context is rebuilt", "admin"),
    Endpoint("POST", "/workspace/now", "workspace_now", "Rewrite NOW.md; its text", "admin"),
    Endpoint("POST", "/workspace/synthesize", "workspace_synthesize",
             "MEMORY.md from the daily logs, then the weekly and monthly roll-ups", "admin"),
    Endpoint("GET", "/workspace/export", "workspace_export",
             "Every markdown file of the workspace, secret-looking lines left out", "admin"),
    Endpoint("POST", "/tokens", "create_token", "A token scoped to a set of memory ids",
             "admin", ok=201,
             body=_object(("memory_ids",), memory_ids={
                 "type": "array", "items": _MEMORY_ID, "minItems": 1, "maxItems": 100})),
)


def path_schema(ep: Endpoint) -> dict[str, Any]:
    """JSON Schema of ``ep``'s path parameters (an object of strings; a ``memory_id``
    follows the memory id rule, an ``entry_id`` is a positive integer)."""
    special = {"memory_id": _MEMORY_ID, "entry_id": _ENTRY_ID}
    return _object(ep.params, **{p: special.get(p, _PARAM) for p in ep.params})


def _strip(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` without the ``pattern`` keywords the validator's subset lacks."""
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "pattern":
            continue
        if key == "properties":
            out[key] = {name: _strip(sub) for name, sub in value.items()}
        elif key in ("items", "additionalProperties") and isinstance(value, Mapping):
            out[key] = _strip(value)
        else:
            out[key] = value
    return out


def _patterns(instance: object, schema: Mapping[str, Any], path: str) -> None:
    pattern = schema.get("pattern")
    if pattern is not None and isinstance(instance, str) and not re.search(pattern, instance):
        bad = find_illegal_char(instance)
        if bad is not None:
            raise SchemaError(path, f"holds U+{bad[1]:04X} at index {bad[0]}, which the "
                                    "substrate cannot store (C0 controls other than "
                                    "TAB/LF/CR, lone surrogates, U+FFFE/U+FFFF)")
        rule = schema.get("description", pattern)
        raise SchemaError(path, f"{instance[:140]!r} does not match the rule: {rule}")
    if isinstance(instance, dict):
        for key, sub in schema.get("properties", {}).items():
            if key in instance:
                _patterns(instance[key], sub, f"{path}.{key}")
    elif isinstance(instance, list) and isinstance(schema.get("items"), Mapping):
        for i, item in enumerate(instance):
            _patterns(item, schema["items"], f"{path}[{i}]")


def check(instance: object, schema: Mapping[str, Any], root: str = "$") -> None:
    """Validate a decoded request body or query against ``schema``.

    Raises:
        SchemaError: naming the failing field by its JSON path (``$.memory``) and what
            was wrong with it; for a ``pattern``, the value and the rule.
    """
    validate(instance, _strip(schema), root)
    _patterns(instance, schema, root)


_ERROR_SCHEMA = _object(("error", "detail"), error={"type": "string"},
                        detail={"type": "string"})


def _operation(ep: Endpoint) -> dict[str, Any]:
    error = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
    ok_content = ({"text/plain": {"schema": {"type": "string"}}} if ep.text
                  else {"application/json": {"schema": {"type": "object"}}})
    responses: dict[str, Any] = {str(ep.ok): {"description": "OK", "content": ok_content}}
    if ep.body is not None or ep.query is not None or ep.params:
        responses["400"] = {"description": "a field is missing or invalid", **error}
    if ep.access != "public":
        responses["401"] = {"description": "missing or unknown bearer token", **error}
        responses["403"] = {"description": "the token does not cover this request", **error}
    if ep.params:
        responses["404"] = {"description": "no such topic, session, fact or event", **error}
    if ep.body is not None:
        responses["413"] = {"description": "the body is over the size limit", **error}
    if ep.path.startswith("/memory"):
        responses["503"] = {"description": "fact memory is switched off (facts_disabled)",
                            **error}
    if ep.name == "chat":
        responses["504"] = {"description": "no reply within the chat timeout", **error}
    op: dict[str, Any] = {"operationId": ep.name, "summary": ep.summary, "responses": responses}
    if ep.description:
        op["description"] = ep.description
    if ep.access == "public":
        op["security"] = []
    parameters = [{"name": p, "in": "path", "required": True, "schema": s}
                  for p, s in path_schema(ep)["properties"].items()]
    if ep.query is not None:
        required = set(ep.query.get("required", ()))
        parameters += [{"name": n, "in": "query", "required": n in required, "schema": s}
                       for n, s in ep.query["properties"].items()]
    if parameters:
        op["parameters"] = parameters
    if ep.body is not None:
        op["requestBody"] = {"required": True,
                             "content": {"application/json": {"schema": ep.body}}}
    return op


def openapi_document(*, version: str, max_body_bytes: int) -> dict[str, Any]:
    """The OpenAPI 3.1 document of :data:`ENDPOINTS` (the schemas requests are checked
    against, unchanged)."""
    paths: dict[str, dict[str, Any]] = {}
    for ep in ENDPOINTS:
        paths.setdefault(ep.path, {})[ep.method.lower()] = _operation(ep)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Solace",
            "version": version,
            "description": (
                "Solace's application API over HTTP. Every error is a JSON body "
                "{\"error\", \"detail\"}. Bodies are limited to "
                f"{max_body_bytes} bytes (413). Tokens: the admin token (HOME/serve.json) "
                "reaches everything; a scoped token (POST /tokens) reaches only POST /chat "
                "naming one of its memory ids and the remember and recall endpoints of "
                "those ids. " + _MEMORY_NOTE
            ),
        },
        "paths": paths,
        "components": {
            "schemas": {"Error": _ERROR_SCHEMA},
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{"bearer": []}],
    }
