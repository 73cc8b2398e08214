"""OpenAPI generation: every operation documents the error envelope for the statuses it can give.

Views declare their success bodies and any error that only they raise (409, 503, ...). The
statuses every view shares follow from how it is built, so they are added here rather than
repeated on each view: a client generator sees the envelope, and a status the API returns is
one the schema names.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from drf_spectacular.plumbing import force_instance
from drf_spectacular.utils import OpenApiResponse
from rest_framework import permissions, serializers

from legacymind.api.inputs import Input

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

    def _error_ref(self) -> dict[str, Any]:
        component = self.resolve_serializer(ErrorOut, "response")
        return component.ref  # type: ignore[no-any-return]
