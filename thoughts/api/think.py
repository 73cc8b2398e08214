"""``POST /api/v1/think``: the legacymind_think tool over REST (specs/002)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from legacymind.api.fields import StringField
from legacymind.api.inputs import Input
from legacymind.api.schema import error
from legacymind.users import signed_in
from thoughts.api.think_out import ThinkOut
from thoughts.services import ThinkResult, thought_think
from thoughts.think.continuity import thought_ref
from thoughts.think.params import think_params


@extend_schema_field(OpenApiTypes.NUMBER)
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
        "minLength": 1,
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


def _text(**kwargs: Any) -> serializers.CharField:
    return serializers.CharField(
        required=False, allow_null=True, allow_blank=True, trim_whitespace=False, **kwargs
    )


class ThinkView(APIView):
    """Store a thought: choose its mode, embed it, link it, inject memories, verify a
    hypothesis, and (when enabled) run the cognitive frameworks."""

    class ThinkInput(Input):
        content = ContentField(trim_whitespace=False)
        hint = _text()
        injection_scale = LenientNumber(required=False, allow_null=True)
        tags = serializers.ListField(
            child=serializers.CharField(), required=False, allow_null=True, max_length=100
        )
        significance = LenientNumber(required=False, allow_null=True)
        verbose_analysis = serializers.BooleanField(required=False, default=False)
        session_id = _text()
        chain_id = _text()
        previous_thought_id = _text(help_text=LINK_HELP)
        revises_thought = _text(help_text=LINK_HELP)
        branch_from = _text(help_text=LINK_HELP)
        confidence = LenientNumber(required=False, allow_null=True)
        hypothesis = _text()
        needs_verification = serializers.BooleanField(required=False, default=False)
        verify_top_k = LenientNumber(required=False, allow_null=True)
        min_similarity = LenientNumber(required=False, allow_null=True)
        evidence_limit = LenientNumber(required=False, allow_null=True)
        contradiction_patterns = serializers.ListField(
            child=serializers.CharField(), required=False, allow_null=True, max_length=50
        )
        # Extensions of the spec's table: the submode profile, privacy, and a caller-chosen id
        # (so that an earlier "string" link can resolve to this thought).
        submode = _text()
        is_private = serializers.BooleanField(required=False, default=False)
        thought_id = _text(
            help_text="The new thought's id (<uuid> or thoughts:<uuid>), so that an earlier "
            "forward link resolves to it; 409 when a thought has it already."
        )

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
        params = think_params(**data.validated_data)
        result = thought_think(owner=signed_in(request), params=params)
        return Response(think_response(result), status=status.HTTP_201_CREATED)


def think_response(result: ThinkResult) -> dict[str, Any]:
    """The spec's output shape, plus ``injected`` (each memory and why it was chosen)."""
    thought, choice = result.thought, result.choice
    telemetry: dict[str, Any] = {
        "trigger_matched": choice.trigger_matched,
        "heuristics": choice.heuristics,
        "links_telemetry": result.continuity.statuses,
        "origin": thought.origin,
        "injection_scale": thought.injection_scale,
        "significance": thought.significance,
        "tags_dropped": result.params.tags_dropped,
        "clamped": result.params.clamped,
        "injection": result.injection.telemetry(),
        "framework_enhanced": bool(thought.framework_enhanced),
    }
    if choice.hint_ignored is not None:
        telemetry["hint_ignored"] = choice.hint_ignored
    if result.params.verbose_analysis:
        telemetry["timings_ms"] = result.timings_ms
    delegated: dict[str, Any] = {
        "thought_id": thought_ref(thought.id),
        "embedding_model": result.provider.model,
        "embedding_dim": result.provider.dim,
        "memories_injected": len(result.injection.memories),
    }
    if thought.framework_analysis is not None:
        delegated["framework_analysis"] = thought.framework_analysis
    return {
        "mode_selected": choice.mode,
        "reason": choice.reason,
        "delegated_result": delegated,
        "links": result.continuity.as_links(),
        "telemetry": telemetry,
        "verification": result.verification,
        "injected": [item.as_dict() for item in result.injection.memories],
    }
