"""``POST /api/v1/think``'s answer: these serializers render a ``ThinkResult`` into the spec's
output shape (spec 002), and the schema is built from the same classes, so what the server
sends and what the schema says cannot drift apart."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from legacymind.api.outputs import Output
from thoughts.think.continuity import thought_ref
from thoughts.think.modes import CONVERSATIONAL, TECHNICAL

LINK_STATUSES = ["record", "string", "dropped_self_link", "dropped_duplicate"]


class _Out(Output):
    # An output whose optional fields (required=False) are left out when they are None. (A
    # comment: a docstring would become every subclass's description in the schema.)

    def to_representation(self, instance: Any) -> dict[str, Any]:
        body: dict[str, Any] = super().to_representation(instance)
        for name, field in self.fields.items():
            if not field.required and body.get(name) is None:
                body.pop(name, None)
        return body


@extend_schema_field({"type": "string", "description": "thoughts:<uuid>"})
class RefOut(serializers.Field):  # type: ignore[type-arg]
    """A thought's UUID as the spec writes it, ``thoughts:<uuid>``."""

    def to_representation(self, value: Any) -> str | None:
        return thought_ref(value)


class Count(serializers.IntegerField):
    """How many items a list holds."""

    def to_representation(self, value: Any) -> int:
        return len(value)


class Flag(serializers.BooleanField):
    """A nullable model flag as a plain boolean: unset is false."""

    def get_attribute(self, instance: Any) -> bool:
        return bool(super().get_attribute(instance))


class Rounded(serializers.FloatField):
    """A similarity or score to 4 places, as the original printed them."""

    def to_representation(self, value: Any) -> float:  # type: ignore[override]
        return round(float(value), 4)


class ThinkDelegatedOut(_Out):
    thought_id = RefOut(source="thought.id", help_text="thoughts:<uuid> of the stored thought.")
    embedding_model = serializers.CharField(source="provider.model")
    embedding_dim = serializers.IntegerField(source="provider.dim")
    memories_injected = Count(source="injection.memories")
    framework_analysis = serializers.DictField(
        source="thought.framework_analysis",
        required=False,
        help_text="Only when the cognitive frameworks ran (THINK_ENHANCE).",
    )


class ThinkLinksOut(Output):
    session_id = serializers.CharField(allow_null=True)
    chain_id = serializers.CharField(allow_null=True)
    previous_thought_id = RefOut(
        source="links.previous_thought_id", allow_null=True, help_text="thoughts:<uuid>"
    )
    revises_thought = RefOut(
        source="links.revises_thought", allow_null=True, help_text="thoughts:<uuid>"
    )
    branch_from = RefOut(source="links.branch_from", allow_null=True, help_text="thoughts:<uuid>")
    confidence = serializers.FloatField(allow_null=True)


class ThinkInjectionTelemetryOut(Output):
    scale = serializers.IntegerField()
    limit = serializers.IntegerField()
    threshold = serializers.FloatField(allow_null=True)
    floor = serializers.FloatField(allow_null=True)
    submode_delta = serializers.FloatField()
    pool = serializers.IntegerField()
    candidates_passing = serializers.IntegerField(
        source="candidates",
        help_text="Candidates over the threshold, or over the floor when none passed.",
    )
    backfilled = serializers.IntegerField(help_text="KG rows embedded on the way.")
    used_floor = serializers.BooleanField()


class ThinkTelemetryOut(_Out):
    trigger_matched = serializers.CharField(source="choice.trigger_matched", allow_null=True)
    heuristics = serializers.DictField(
        source="choice.heuristics",
        allow_null=True,
        help_text="keywords, score (and tied modes) of the keyword tier.",
    )
    links_telemetry = serializers.DictField(
        source="continuity.statuses",
        child=serializers.ChoiceField(choices=LINK_STATUSES),
        help_text="Per link field: record, string, dropped_self_link or dropped_duplicate.",
    )
    origin = serializers.CharField(source="thought.origin")
    injection_scale = serializers.IntegerField(source="thought.injection_scale")
    significance = serializers.FloatField(source="thought.significance")
    tags_dropped = serializers.ListField(
        source="params.tags_dropped", child=serializers.CharField()
    )
    clamped = serializers.DictField(
        source="params.clamped", help_text="Per number given out of range: {given, used}."
    )
    injection = ThinkInjectionTelemetryOut()
    framework_enhanced = Flag(source="thought.framework_enhanced")
    hint_ignored = serializers.CharField(
        source="choice.hint_ignored", required=False, help_text="An unknown hint, if any."
    )
    timings_ms = serializers.DictField(required=False, help_text="With verbose_analysis.")

    def to_representation(self, instance: Any) -> dict[str, Any]:
        body = super().to_representation(instance)
        if not instance.params.verbose_analysis:
            body.pop("timings_ms", None)
        return body


class _MemoryOut(Output):
    """What injection and verification both say of a KG memory."""

    id = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=["entity", "observation"])
    ref = serializers.CharField(help_text="kge:<id> or kgo:<id>.")
    name = serializers.CharField()
    similarity = Rounded()


class ThinkInjectedOut(Output):
    """What injection and verification both say of a KG memory."""

    id = serializers.IntegerField(source="candidate.id")
    kind = serializers.ChoiceField(source="candidate.kind", choices=["entity", "observation"])
    ref = serializers.CharField(source="candidate.ref", help_text="kge:<id> or kgo:<id>.")
    name = serializers.CharField(source="candidate.name")
    similarity = Rounded(source="candidate.similarity")
    score = Rounded(help_text="Orbital relevance: similarity, recency, ...")
    rank = serializers.IntegerField()
    reason = serializers.ChoiceField(choices=["threshold", "floor"])


class ThinkEvidenceOut(_MemoryOut):
    text = serializers.CharField()
    matched_pattern = serializers.CharField(allow_null=True)


class ThinkVerificationOut(Output):
    hypothesis = serializers.CharField()
    supporting = ThinkEvidenceOut(many=True)
    contradicting = ThinkEvidenceOut(many=True)
    confidence_score = serializers.FloatField()
    suggested_revision = serializers.CharField(allow_null=True)
    telemetry = serializers.DictField()


class ThinkOut(Output):
    # Renders a thoughts.services.ThinkResult: the spec's output shape, plus `injected` (each
    # memory and why it was chosen).

    mode_selected = serializers.ChoiceField(
        source="choice.mode", choices=[*CONVERSATIONAL, *TECHNICAL]
    )
    reason = serializers.CharField(source="choice.reason")
    delegated_result = ThinkDelegatedOut(source="*")
    links = ThinkLinksOut(source="continuity")
    telemetry = ThinkTelemetryOut(source="*")
    verification = ThinkVerificationOut(
        allow_null=True, help_text="Only with needs_verification and a hypothesis."
    )
    injected = ThinkInjectedOut(
        source="injection.memories", many=True, help_text="Each memory injected and why."
    )


# DRF builds a serializer's fields by deep-copying the declared ones, and each nested serializer
# builds its own again: for ThinkOut that was about 5 ms of every request's CPU, more than the
# rest of the rendering. Rendering holds no per-request state (no context, no validation), so
# one instance, bound once, renders every result; ThinkOut itself stays the schema's source.
_RENDERER = ThinkOut()


def think_render(result: Any) -> dict[str, Any]:
    """``result`` (a ``ThinkResult``) in the spec's output shape, as ``ThinkOut`` describes it."""
    body: dict[str, Any] = _RENDERER.to_representation(result)
    return body
