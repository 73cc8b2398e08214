"""``POST /api/v1/think``: the legacymind_think tool over REST (specs/002)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from legacymind.api.fields import StringField
from legacymind.api.inputs import Input, QuickFields
from legacymind.api.patterns import NO_NUL, NOT_BLANK, any_case, numeric_text_or_number
from legacymind.api.schema import error
from legacymind.users import signed_in
from thoughts.api.think_out import ThinkOut, think_render
from thoughts.refs import THOUGHT_REF_PATTERN
from thoughts.services import thought_think
from thoughts.think.params import (
    MAX_HYPOTHESIS_CHARS,
    MAX_ID_LENGTH,
    SUBMODES,
    ThinkParams,
    think_params,
)


@extend_schema_field(numeric_text_or_number("A number or a numeric string; clamped into range."))
class LenientNumber(serializers.Field):  # type: ignore[type-arg]
    """A JSON number or a numeric string; range clamping happens in ``think_params``."""

    default_error_messages = {"invalid": "Must be a number or a numeric string."}

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, bool) or not isinstance(data, int | float | str):
            self.fail("invalid")
        return data

    def to_representation(self, value: Any) -> Any:
        return value


@extend_schema_field(
    {
        "type": "string",
        "pattern": NOT_BLANK,
        "description": "The thought: not blank, at most 100 KB of UTF-8.",
    }
)
class ContentField(StringField):
    """Blank and oversize content are refused by ``think_params`` with the spec's messages; the
    schema states the same rule."""

    def run_validation(self, data: Any = serializers.empty) -> Any:
        if data == "":
            return data  # to think_params, which says "must not be empty" as for whitespace
        return super().run_validation(data)


LINK_HELP = (
    "A thought id, <uuid> or thoughts:<uuid>. An id not stored yet is kept as a forward link "
    '(status "string"); a malformed one is a 400.'
)
_REF = THOUGHT_REF_PATTERN.removeprefix("^").removesuffix("$")
_SUBMODE_WORDS = [*SUBMODES, "problemsolving"]
# What think_params reads, said as patterns: surrounding white space is dropped, links and ids
# are thought ids, a submode's case and -/_ do not matter, ids are at most 128 characters.
TEXT_SCHEMAS: dict[str, dict[str, Any]] = {
    "link": {"pattern": rf"^\s*$|^\s*{_REF}\s*$"},
    "own_id": {"pattern": rf"^$|^\s*{_REF}\s*$"},
    "submode": {"pattern": "^$|^\\s*(" + "|".join(map(any_case, _SUBMODE_WORDS)) + ")\\s*$"},
    "id": {"pattern": rf"^\s*[^\u0000]{{0,{MAX_ID_LENGTH}}}\s*$"},
    "hypothesis": {"pattern": NO_NUL, "maxLength": MAX_HYPOTHESIS_CHARS},
    "text": {"pattern": NO_NUL},
}


def _text(schema: str, **kwargs: Any) -> serializers.CharField:
    """An optional text that think_params reads; ``schema`` names what the schema says of it."""
    # anyOf, not a plain string: drf-spectacular would add "" as a oneOf choice that the
    # pattern matches too, and oneOf then refuses "".
    described = {"anyOf": [{"type": "string", **TEXT_SCHEMAS[schema]}]}
    field_class = extend_schema_field(described)(type("Text", (serializers.CharField,), {}))
    return field_class(
        required=False, allow_null=True, allow_blank=True, trim_whitespace=False, **kwargs
    )


class ThinkView(APIView):
    """Store a thought: choose its mode, embed it, link it, inject memories, verify a
    hypothesis, and (when enabled) run the cognitive frameworks."""

    class ThinkInput(QuickFields, Input):
        content = ContentField(trim_whitespace=False)
        hint = _text("text")
        injection_scale = LenientNumber(required=False, allow_null=True)
        tags = serializers.ListField(
            child=serializers.CharField(), required=False, allow_null=True, max_length=100
        )
        significance = LenientNumber(required=False, allow_null=True)
        verbose_analysis = serializers.BooleanField(required=False, default=False)
        session_id = _text("id")
        chain_id = _text("id")
        previous_thought_id = _text("link", help_text=LINK_HELP)
        revises_thought = _text("link", help_text=LINK_HELP)
        branch_from = _text("link", help_text=LINK_HELP)
        confidence = LenientNumber(required=False, allow_null=True)
        hypothesis = _text("hypothesis")
        needs_verification = serializers.BooleanField(required=False, default=False)
        verify_top_k = LenientNumber(required=False, allow_null=True)
        min_similarity = LenientNumber(required=False, allow_null=True)
        evidence_limit = LenientNumber(required=False, allow_null=True)
        contradiction_patterns = serializers.ListField(
            child=serializers.CharField(), required=False, allow_null=True, max_length=50
        )
        # Extensions of the spec's table: the submode profile, privacy, and a caller-chosen id
        # (so that an earlier "string" link can resolve to this thought).
        submode = _text("submode")
        is_private = serializers.BooleanField(required=False, default=False)
        thought_id = _text(
            "own_id",
            help_text="The new thought's id (<uuid> or thoughts:<uuid>), so that an earlier "
            "forward link resolves to it; 409 when a thought has it already.",
        )

        def params(self) -> ThinkParams:
            """The validated body as the service takes it (numbers clamped, links parsed)."""
            return think_params(**self.validated_data)

    @extend_schema(
        request=ThinkInput,
        responses={
            201: ThinkOut,
            409: error("thought_id names a thought that exists already."),
            503: error("The content could not be embedded; nothing was stored."),
        },
    )
    def post(self, request: Request) -> Response:
        data = self.ThinkInput(data=request.data)
        data.is_valid(raise_exception=True)
        result = thought_think(owner=signed_in(request), params=data.params())
        return Response(think_render(result), status=status.HTTP_201_CREATED)
