"""The shape of ``POST /api/v1/think``'s answer, for the OpenAPI schema.

``think_response`` builds the body as plain data (the spec's output shape, spec 002); these
serializers describe it so that clients and generated code know every field. A test checks
real answers against the schema built from them (tests/thoughts/test_think_schema.py).
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from thoughts.think.modes import CONVERSATIONAL, TECHNICAL

LINK_STATUSES = ["record", "string", "dropped_self_link", "dropped_duplicate"]


class ThinkDelegatedOut(serializers.Serializer[Any]):
    thought_id = serializers.CharField(help_text="thoughts:<uuid> of the stored thought.")
    embedding_model = serializers.CharField()
    embedding_dim = serializers.IntegerField()
    memories_injected = serializers.IntegerField()
    framework_analysis = serializers.DictField(
        required=False, help_text="Only when the cognitive frameworks ran (SURR_THINK_ENHANCE)."
    )


class ThinkLinksOut(serializers.Serializer[Any]):
    session_id = serializers.CharField(allow_null=True)
    chain_id = serializers.CharField(allow_null=True)
    previous_thought_id = serializers.CharField(allow_null=True, help_text="thoughts:<uuid>")
    revises_thought = serializers.CharField(allow_null=True, help_text="thoughts:<uuid>")
    branch_from = serializers.CharField(allow_null=True, help_text="thoughts:<uuid>")
    confidence = serializers.FloatField(allow_null=True)


class ThinkInjectionTelemetryOut(serializers.Serializer[Any]):
    scale = serializers.IntegerField()
    limit = serializers.IntegerField()
    threshold = serializers.FloatField(allow_null=True)
    floor = serializers.FloatField(allow_null=True)
    submode_delta = serializers.FloatField()
    pool = serializers.IntegerField()
    candidates_passing = serializers.IntegerField(
        help_text="Candidates over the threshold, or over the floor when none passed."
    )
    backfilled = serializers.IntegerField(help_text="KG rows embedded on the way.")
    used_floor = serializers.BooleanField()


class ThinkTelemetryOut(serializers.Serializer[Any]):
    trigger_matched = serializers.CharField(allow_null=True)
    heuristics = serializers.DictField(
        allow_null=True, help_text="keywords, score (and tied modes) of the keyword tier."
    )
    links_telemetry = serializers.DictField(
        child=serializers.ChoiceField(choices=LINK_STATUSES),
        help_text="Per link field: record, string, dropped_self_link or dropped_duplicate.",
    )
    origin = serializers.CharField()
    injection_scale = serializers.IntegerField()
    significance = serializers.FloatField()
    tags_dropped = serializers.ListField(child=serializers.CharField())
    clamped = serializers.DictField(help_text="Per number given out of range: {given, used}.")
    injection = ThinkInjectionTelemetryOut()
    framework_enhanced = serializers.BooleanField()
    hint_ignored = serializers.CharField(required=False, help_text="An unknown hint, if any.")
    timings_ms = serializers.DictField(required=False, help_text="With verbose_analysis.")


class _MemoryOut(serializers.Serializer[Any]):
    """What injection and verification both say of a KG memory."""

    id = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=["entity", "observation"])
    ref = serializers.CharField(help_text="kge:<id> or kgo:<id>.")
    name = serializers.CharField()
    similarity = serializers.FloatField()


class ThinkInjectedOut(_MemoryOut):
    score = serializers.FloatField(help_text="Orbital relevance: similarity, recency, ...")
    rank = serializers.IntegerField()
    reason = serializers.ChoiceField(choices=["threshold", "floor"])


class ThinkEvidenceOut(_MemoryOut):
    text = serializers.CharField()
    matched_pattern = serializers.CharField(allow_null=True)


class ThinkVerificationOut(serializers.Serializer[Any]):
    hypothesis = serializers.CharField()
    supporting = ThinkEvidenceOut(many=True)
    contradicting = ThinkEvidenceOut(many=True)
    confidence_score = serializers.FloatField()
    suggested_revision = serializers.CharField(allow_null=True)
    telemetry = serializers.DictField()


class ThinkOut(serializers.Serializer[Any]):
    mode_selected = serializers.ChoiceField(choices=[*CONVERSATIONAL, *TECHNICAL])
    reason = serializers.CharField()
    delegated_result = ThinkDelegatedOut()
    links = ThinkLinksOut()
    telemetry = ThinkTelemetryOut()
    verification = ThinkVerificationOut(
        allow_null=True, help_text="Only with needs_verification and a hypothesis."
    )
    injected = ThinkInjectedOut(many=True, help_text="Each memory injected and why.")
