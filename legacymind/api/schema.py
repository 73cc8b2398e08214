"""OpenAPI generation: every operation documents the error envelope for the statuses it can give.

Views declare their success bodies and any error that only they raise (409, 503, ...). The
statuses every view shares follow from how it is built, so they are added here rather than
repeated on each view: a client generator sees the envelope, and a status the API returns is
one the schema names.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.validators import ProhibitNullCharactersValidator, RegexValidator
from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from drf_spectacular.plumbing import force_instance
from drf_spectacular.utils import OpenApiResponse
from rest_framework import permissions, serializers

from legacymind.api.inputs import Input
from legacymind.api.patterns import ANY, EDGE, NO_NUL, WS

UNSAFE = {"POST", "PUT", "PATCH", "DELETE"}
# Permission classes that only ask "is there a user": any other one can refuse a signed-in user.
_SIGNED_IN_ONLY = (permissions.AllowAny, permissions.IsAuthenticated)


class ErrorOut(serializers.Serializer[Any]):
    """The error envelope of ``legacymind.errors``."""

    error_code = serializers.CharField(help_text="Stable machine-readable code, e.g. invalid.")
    detail = serializers.CharField(help_text="One sentence for a person.")
    fields = serializers.DictField(help_text="Field name → messages, for 400s.")  # type: ignore[assignment]


def error(description: str) -> OpenApiResponse:
    return OpenApiResponse(ErrorOut, description=description)


class AutoSchema(SpectacularAutoSchema):
    def get_operation(self, *args: Any, **kwargs: Any) -> dict[str, Any] | None:
        operation = super().get_operation(*args, **kwargs)
        if operation is None:
            return None
        body = operation.get("requestBody")
        if body is not None and getattr(self.view, "body_required", False):
            body["required"] = True  # drf-spectacular cannot tell for a pydantic root model
        for parameter in operation.get("parameters", []):
            if parameter["in"] == "query" and not parameter.get("required"):
                parameter["schema"] = _or_empty(parameter["name"], parameter["schema"])
        responses = operation.setdefault("responses", {})
        for code, description in self._shared_errors(operation).items():
            if str(code) not in responses:
                responses[str(code)] = {
                    "content": {"application/json": {"schema": self._error_ref()}},
                    "description": description,
                }
        return operation

    def _map_basic_serializer(self, serializer: Any, direction: str) -> dict[str, Any]:
        schema: dict[str, Any] = super()._map_basic_serializer(serializer, direction)
        if direction == "request" and isinstance(force_instance(serializer), Input):
            schema["additionalProperties"] = False  # an unknown key is a 400 (inputs.py)
            schema.update(getattr(serializer, "schema_rules", {}))
        return schema

    def _map_serializer_field(self, field: Any, direction: str, *args: Any, **kwargs: Any) -> Any:
        schema = super()._map_serializer_field(field, direction, *args, **kwargs)
        if direction == "request" and _refuses_nul(field) and _plain_string(schema):
            schema = _text_schema(field, schema)
        if direction == "request" and isinstance(field, serializers.ListSerializer):
            # drf-spectacular leaves out the bounds of a list of serializers.
            low, high = getattr(field, "min_length", None), getattr(field, "max_length", None)
            if low is not None or not field.allow_empty:
                schema["minItems"] = max(low or 0, 0 if field.allow_empty else 1)
            if high is not None:
                schema["maxItems"] = high
        return schema

    def _shared_errors(self, operation: dict[str, Any]) -> dict[int, str]:
        errors: dict[int, str] = {}
        takes_input = bool(operation.get("requestBody")) or any(
            p.get("in") == "query" for p in operation.get("parameters", [])
        )
        if takes_input or self.method in UNSAFE:
            errors[400] = "Invalid input; `fields` names each field and what is wrong with it."
        checks = self.view.get_permissions()
        if not all(isinstance(p, permissions.AllowAny) for p in checks):
            errors[401] = "Not authenticated: send `Authorization: Token <key>` or a session."
        if self.method in UNSAFE or not all(isinstance(p, _SIGNED_IN_ONLY) for p in checks):
            # Unsafe methods: also a session request without its CSRF token.
            errors[403] = "Not allowed for this user (or a session request without CSRF token)."
        if "{" in self.path:
            errors[404] = "No such object, or not visible to this user."
        elif self._names_rows():
            errors[404] = "An id in the input names no object this user may see (`fields`)."
        # Content negotiation runs before every view: an Accept header naming neither JSON nor
        # HTML (the browsable API) is a 406, in the envelope.
        errors[406] = "Not acceptable: send `Accept: application/json` (or none)."
        if operation.get("requestBody"):
            limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
            errors[413] = f"Request body too large: over {limit} bytes."
            errors[415] = "Unsupported content type; send application/json."
        if self.view.get_throttles():
            errors[429] = "Too many requests; retry after the `Retry-After` header's seconds."
        return errors

    def _names_rows(self) -> bool:
        """Whether the input names rows by id (a missing one is a 404, legacymind.api.inputs)."""
        if self.method not in UNSAFE:
            return False
        serializer = force_instance(self.get_request_serializer())
        pending = [serializer] if isinstance(serializer, serializers.Serializer) else []
        while pending:
            for field in pending.pop().fields.values():
                field = getattr(field, "child", field)
                if isinstance(field, serializers.RelatedField) or getattr(field, "refers", False):
                    return True
                if isinstance(field, serializers.Serializer):
                    pending.append(field)
        return False

    def _error_ref(self) -> dict[str, Any]:
        component = self.resolve_serializer(ErrorOut, "response")
        return component.ref  # type: ignore[no-any-return]


def _refuses_nul(field: Any) -> bool:
    # A RegexField's own pattern says what it takes (drf-spectacular adds it later).
    validators = field.validators
    return any(isinstance(v, ProhibitNullCharactersValidator) for v in validators) and not any(
        isinstance(v, RegexValidator) for v in validators
    )


def _plain_string(schema: Any) -> bool:
    # A pattern, format or enum of its own already excludes a NUL.
    return (
        isinstance(schema, dict)
        and schema.get("type") == "string"
        and not {"pattern", "format", "enum"} & schema.keys()
    )


def _text_schema(field: Any, schema: dict[str, Any]) -> dict[str, Any]:
    """What a DRF CharField takes, exactly: no NUL (Postgres cannot store one), and, when it
    strips white space first (the default), the blank and length rules on the stripped text.

    Returned as an anyOf of one string schema, so drf-spectacular adds no maxLength (it would
    count the white space DRF strips) and no oneOf for "" (which the pattern decides)."""
    outer = {k: schema.pop(k) for k in list(schema) if k in _OUTER_KEYS}
    inner: dict[str, Any] = {"type": "string"}
    if field.trim_whitespace:
        inner["pattern"] = _stripped_pattern(field.max_length, blank=field.allow_blank)
        if field.max_length is not None and field.max_length > _PATTERN_MAX_REPEAT:
            inner["maxLength"] = field.max_length
    else:
        inner["pattern"] = NO_NUL
        if field.max_length is not None:
            inner["maxLength"] = field.max_length
        if not field.allow_blank:
            inner["minLength"] = 1
    return {"anyOf": [inner], **outer}


_OUTER_KEYS = {"description", "title", "default", "nullable", "readOnly", "writeOnly", "example"}


# Longer caps are a maxLength beside an unbounded pattern: a regular expression with a repeat
# count in the thousands is one a generator gives up on. (maxLength counts the white space DRF
# strips, so it is stricter than the server by that much.)
_PATTERN_MAX_REPEAT = 1000


def _stripped_pattern(max_length: int | None, *, blank: bool) -> str:
    # First and last characters not white space (nor NUL), at most max_length in all.
    bounded = max_length is not None and max_length <= _PATTERN_MAX_REPEAT
    middle = f"{ANY}{{0,{max((max_length or 0) - 2, 0)}}}" if bounded else f"{ANY}*"
    core = EDGE if max_length == 1 else f"{EDGE}(?:{middle}{EDGE})?"
    return rf"^{WS}*({core}){'?' if blank else ''}{WS}*$"


# Read by the paginator itself (legacymind.api.pagination), which refuses "".
_OWN_QUERY = {"limit", "offset"}


def _or_empty(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """DRF reads an optional query parameter given as "" (``?date_from=``) as one left out:
    the schema takes "" too, where the parameter's own schema does not."""
    if name in _OWN_QUERY or (schema.get("type") == "string" and len(schema) == 1):
        return schema
    return {"anyOf": [schema, {"type": "string", "maxLength": 0}]}
