"""JSON Schemas of the tools, drawn from the DRF serializers that validate the same input over
REST: drf-spectacular maps each serializer as it does for the OpenAPI document, and the
components it refers to are inlined, as an MCP client reads one self-contained schema."""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import ComponentRegistry
from drf_spectacular.settings import spectacular_settings
from rest_framework import serializers
from rest_framework.settings import api_settings
from rest_framework.views import APIView

_REF = "#/components/schemas/"
# The docstring of legacymind.api.inputs.Input, which every input shares: not the tool's words.
_SHARED_DOCS = {"A serializer for what a client sends: every key must be one of its fields."}


class _SchemaView(APIView):
    """The view drf-spectacular expects a serializer to belong to."""


def _mapper() -> AutoSchema:
    # The API's schema class: whatever it adds to a serializer's schema, the tools say too.
    auto: AutoSchema = api_settings.DEFAULT_SCHEMA_CLASS()  # type: ignore[operator]
    auto.registry = ComponentRegistry()
    auto.method, auto.path, auto.path_regex = "POST", "/mcp", "/mcp"
    auto.view = _SchemaView()
    auto.view.request = None  # type: ignore[assignment]
    return auto


def _inline(node: Any, components: dict[str, Any], strict: bool) -> Any:
    if isinstance(node, list):
        return [_inline(item, components, strict) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith(_REF):
        if ref == _REF + "JSONValue":  # recursive (any JSON value): a schema that takes anything
            return {}
        return _inline(copy.deepcopy(components[ref.removeprefix(_REF)]), components, strict)
    out = {key: _inline(value, components, strict) for key, value in node.items()}
    if "oneOf" in out:
        # drf-spectacular's oneOf for a nullable any-value ({} or null) matches null twice, and
        # so refuses it: anyOf says what the serializer means.
        out["anyOf"] = out.pop("oneOf")
    if isinstance(out.get("description"), str) and out["description"] in _SHARED_DOCS:
        del out["description"]
    if strict and out.get("type") == "object" and "properties" in out:
        # Input refuses unknown names (legacymind.api.inputs): the schema says so too.
        out.setdefault("additionalProperties", False)
    return out


@cache
def serializer_schema(serializer_class: type[serializers.Serializer[Any]], direction: str) -> dict:
    """The JSON Schema of ``serializer_class`` as a request (``direction="request"``, unknown
    names refused) or a response."""
    auto = _mapper()
    schema = auto._map_serializer(serializer_class(), direction)
    appended = spectacular_settings.APPEND_COMPONENTS.get("schemas", {})
    components = {
        **appended,
        **{name: c.schema for (name, _kind), c in auto.registry._components.items()},
    }
    inlined: dict[str, Any] = _inline(schema, components, strict=direction == "request")
    inlined["type"] = "object"
    return inlined
