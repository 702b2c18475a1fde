"""The HTTP surface (``solace serve``): JSON over HTTP on trio, with an OpenAPI 3.1
document made from the same schemas that validate requests, and bearer-token auth.

Modules: :mod:`.routes` (the endpoint table and the OpenAPI document), :mod:`.app`
(the ASGI application), :mod:`.tokens` (admin and scoped tokens, ``serve.json``),
:mod:`.metrics` (``/metrics``), :mod:`.server` (the process), :mod:`.cli` (the
``serve`` subcommand).
"""

from __future__ import annotations

from solace.surfaces.http.app import MAX_BODY_BYTES as MAX_BODY_BYTES
from solace.surfaces.http.app import build_app as build_app
from solace.surfaces.http.routes import ENDPOINTS as ENDPOINTS
from solace.surfaces.http.routes import openapi_document as openapi_document
from solace.surfaces.http.server import Serving as Serving
from solace.surfaces.http.server import serve as serve

__all__ = ["ENDPOINTS", "MAX_BODY_BYTES", "Serving", "build_app", "openapi_document", "serve"]
