"""Extraction and the moderation queue over HTTP."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from kg import selectors, services
from kg.api.permissions import IsModerator
from kg.models import CandidateStatus, EntityCandidate
from legacymind.api.fields import StringField, UUIDStringField
from legacymind.api.inputs import Input, query_input
from legacymind.api.schema import error
from legacymind.errors import NotFound
from legacymind.users import signed_in
from thoughts.selectors.visibility import thoughts_visible_to


class KgExtractedEntity(serializers.Serializer[Any]):
    name = serializers.CharField()
    entity_type = serializers.CharField()
    confidence = serializers.FloatField()


class KgExtractedEdge(serializers.Serializer[Any]):
    source = serializers.CharField()  # type: ignore[assignment]
    target = serializers.CharField()
    rel_type = serializers.CharField()
    confidence = serializers.FloatField()


class KgStagedCounts(serializers.Serializer[Any]):
    """What this call put before the moderators: every distinct entity and edge found (0 in a
    dry run), including those already pending, in the graph or rejected before, which are not
    staged twice. It never says which were new: that would tell whether a name is known."""

    entities = serializers.IntegerField()
    edges = serializers.IntegerField()


class KgExtractOutput(serializers.Serializer[Any]):
    # Renders {"result": the extraction, "staged": its StageCounts}.

    provider = serializers.CharField(source="result.provider")
    model = serializers.CharField(source="result.model")
    entities = KgExtractedEntity(source="result.entities", many=True)
    edges = KgExtractedEdge(source="result.edges", many=True)
    staged = KgStagedCounts()


class ExtractText(StringField):
    """The text to extract from: a JSON string that is not blank once trimmed, so whitespace
    never reaches a model."""


class ExtractView(APIView):
    """Run the extractor chain (CLI -> Grok -> heuristic) on a text and stage the results as
    pending candidates; ``dry_run`` writes nothing."""

    class KgExtractInput(Input):
        text = ExtractText(max_length=200_000)
        dry_run = serializers.BooleanField(default=False)
        thought_id = UUIDStringField(required=False, allow_null=True, default=None)

    @extend_schema(
        tags=["kg"],
        request=KgExtractInput,
        responses={
            200: KgExtractOutput,
            404: error("thought_id names no thought of yours."),
            503: error("No extraction provider could answer."),
        },
    )
    def post(self, request: Request) -> Response:
        data = self.KgExtractInput(data=request.data)
        data.is_valid(raise_exception=True)
        thought_id = data.validated_data["thought_id"]
        # Another user's thought reads like a missing one (the one visibility rule).
        mine = thoughts_visible_to(request.user)
        if thought_id is not None and not mine.filter(pk=thought_id).exists():
            raise NotFound(f"thought {thought_id} does not exist")
        dry_run = data.validated_data["dry_run"]
        result, _ = services.text_extract(
            text=data.validated_data["text"], dry_run=dry_run, origin="api", thought_id=thought_id
        )
        staged = services.StageCounts() if dry_run else services.submitted(result)
        return Response(KgExtractOutput({"result": result, "staged": staged}).data)


class KgSuggestion(serializers.Serializer[Any]):
    id = serializers.IntegerField(source="entity.pk")
    name = serializers.CharField(source="entity.name")
    entity_type = serializers.CharField(source="entity.entity_type")
    score = serializers.FloatField()
    reason = serializers.CharField()


class KgCandidate(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    kind = serializers.SerializerMethodField()
    status = serializers.CharField()
    confidence = serializers.FloatField()
    origin = serializers.CharField()
    staged_by_thought_id = serializers.UUIDField(allow_null=True)
    from_private_thought = serializers.SerializerMethodField(
        help_text="Drawn from a private thought: its names are that thought's owner's. "
        "Approved, it becomes a memory only they see; it never becomes an alias of a shared "
        "entity."
    )
    provider = serializers.CharField()
    model = serializers.CharField()
    prompt_hash = serializers.CharField()
    created_at = serializers.DateTimeField()
    reviewed_by = serializers.CharField(
        source="reviewed_by.username", allow_null=True, default=None
    )
    reviewed_at = serializers.DateTimeField(allow_null=True)
    review_note = serializers.CharField()
    promoted_id = serializers.IntegerField(allow_null=True)
    name = serializers.CharField(required=False)
    entity_type = serializers.CharField(required=False)
    source_name = serializers.CharField(required=False)
    target_name = serializers.CharField(required=False)
    rel_type = serializers.CharField(required=False)
    entity_name = serializers.CharField(
        required=False, help_text="An observation's entity, by name (blank: none)."
    )
    description = serializers.CharField(required=False)
    suggestions = serializers.SerializerMethodField()

    def get_from_private_thought(self, obj: selectors.AnyCandidate) -> bool:
        thought = obj.staged_by_thought  # select_related by the queue
        return thought is not None and thought.is_private

    def get_kind(self, obj: selectors.AnyCandidate) -> str:
        return selectors.candidate_kind(obj)

    def get_suggestions(self, obj: selectors.AnyCandidate) -> list[dict[str, Any]]:
        found = (
            self.context.get("suggestions", {}).get(("entity", obj.pk))
            if isinstance(obj, EntityCandidate)
            else None
        )
        return list(KgSuggestion(found or [], many=True).data)


class CandidateListView(GenericAPIView):  # type: ignore[type-arg]
    """The moderation queue (``memories_moderate`` review), paged like every list. Moderators
    only."""

    permission_classes = [IsModerator]
    serializer_class = KgCandidate

    class Query(Input):
        status = serializers.ChoiceField(
            choices=[*CandidateStatus.values, "all"], default=CandidateStatus.PENDING
        )
        target = serializers.ChoiceField(choices=selectors.TARGETS, default="mixed")
        min_conf = serializers.FloatField(min_value=0, max_value=1, required=False)
        suggest = serializers.BooleanField(default=False)

    @extend_schema(tags=["kg"], parameters=[Query], responses=KgCandidate(many=True))
    def get(self, request: Request) -> Response:
        query = query_input(request, self.Query, paged=True)
        params = query.validated_data
        queue = selectors.candidate_queue(
            target=params["target"],
            status=None if params["status"] == "all" else params["status"],
            min_conf=params.get("min_conf"),
        )
        rows: list[selectors.AnyCandidate] = self.paginate_queryset(queue) or []  # type: ignore[arg-type]
        suggestions: dict[tuple[str, int], Any] = {}
        if params["suggest"]:
            pending = [
                c
                for c in rows
                if isinstance(c, EntityCandidate) and c.status == CandidateStatus.PENDING
            ]
            found = selectors.suggestions_for(pending, viewer=request.user)
            suggestions = {("entity", pk): found_rows for pk, found_rows in found.items()}
        return self.get_paginated_response(
            KgCandidate(rows, many=True, context={"suggestions": suggestions}).data
        )


class KgDecisionItem(Input):
    id = serializers.IntegerField(min_value=1)
    kind = serializers.ChoiceField(choices=["entity", "edge", "relationship", "observation"])
    decision = serializers.ChoiceField(choices=["approve", "reject", "alias"])
    note = serializers.CharField(allow_blank=True, default="", max_length=2000)
    feedback = serializers.CharField(allow_blank=True, required=False, max_length=2000)
    canonical_id = serializers.IntegerField(
        min_value=1,
        required=False,
        allow_null=True,
        help_text="For alias: an entity you can see (another id fails as missing).",
    )

    # The rule validate() applies, in the schema's words: an alias names its canonical entity.
    schema_rules = {
        "anyOf": [
            {"properties": {"decision": {"not": {"const": "alias"}}}},
            {"required": ["canonical_id"], "properties": {"canonical_id": {"type": "integer"}}},
        ]
    }

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs["decision"] == "alias" and not attrs.get("canonical_id"):
            raise serializers.ValidationError({"canonical_id": "alias needs canonical_id"})
        return attrs


def decision_items(validated: list[dict[str, Any]]) -> list[services.DecisionItem]:
    """Validated :class:`KgDecisionItem` values as the service takes them: "relationship" is an
    edge, and ``feedback`` stands for an empty ``note``. Every door that takes decision items
    (this endpoint, ``memories_moderate``) builds them here."""
    return [
        services.DecisionItem(
            id=i["id"],
            kind="edge" if i["kind"] == "relationship" else i["kind"],
            decision=i["decision"],
            note=i.get("note") or i.get("feedback", ""),
            canonical_id=i.get("canonical_id"),
        )
        for i in validated
    ]


class KgDecisionOutcome(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    kind = serializers.CharField()
    decision = serializers.CharField()
    ok = serializers.BooleanField()
    status = serializers.CharField(
        help_text="The candidate's status after this item: the decision's when it applied; "
        "when it failed, the status it still has (pending, or the earlier decision's), or "
        "'missing' when there is no such candidate."
    )
    promoted_id = serializers.IntegerField(
        allow_null=True,
        help_text="The entity or edge the candidate became or was aliased to. Null for a "
        "rejection, a failed item, and in a dry run for a row that would be created (its id is "
        "assigned only when the decision is applied).",
    )
    detail = serializers.CharField()


class DecideView(APIView):
    """Approve, reject or alias candidates (``memories_moderate`` decide). Moderators only."""

    permission_classes = [IsModerator]

    class KgDecideInput(Input):
        items = KgDecisionItem(many=True, allow_empty=False, min_length=1, max_length=200)  # type: ignore[call-arg]
        dry_run = serializers.BooleanField(default=False)

        def params(self) -> tuple[list[services.DecisionItem], bool]:
            """The decisions as the service takes them (:func:`decision_items`), and
            dry_run."""
            return decision_items(self.validated_data["items"]), self.validated_data["dry_run"]

    class KgDecideOutput(serializers.Serializer[Any]):
        dry_run = serializers.BooleanField()
        results = KgDecisionOutcome(many=True)

    @extend_schema(tags=["kg"], request=KgDecideInput, responses=KgDecideOutput)
    def post(self, request: Request) -> Response:
        data = self.KgDecideInput(data=request.data)
        data.is_valid(raise_exception=True)
        items, dry_run = data.params()
        outcomes = services.candidates_decide(
            items=items, reviewer=signed_in(request), dry_run=dry_run
        )
        return Response(self.KgDecideOutput({"dry_run": dry_run, "results": outcomes}).data)
