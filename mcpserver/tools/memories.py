"""``memories_create`` and ``memories_moderate``: the KG's REST inputs and services as the
original's two tools."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from rest_framework import serializers

from kg import selectors, services
from kg.api.fields import SourceThought, source_context
from kg.api.graph import (
    KgEdge,
    KgEdgeInput,
    KgEntity,
    KgEntityInput,
    KgObservation,
    KgObservationInput,
)
from kg.api.moderation import KgCandidate, KgDecisionItem, KgDecisionOutcome, decision_items
from kg.models import CandidateStatus, EntityCandidate
from legacymind.api.fields import JSONObjectField
from legacymind.api.inputs import Input
from mcpserver.kgwrites import may_moderate, retrying, stage, writes_direct
from mcpserver.registry import Call, Tool, ToolError, register, validation_message

KINDS = {"entity": KgEntityInput, "relationship": KgEdgeInput, "observation": KgObservationInput}


class MemoriesCreateInput(Input):
    kind = serializers.ChoiceField(choices=list(KINDS))
    data = JSONObjectField(  # type: ignore[assignment]
        help_text="entity: name, entity_type, description, data, aliases; relationship: "
        "source_id, target_id (entity ids), rel_type, data; observation: name, description, "
        "data, entity_id."
    )
    upsert = serializers.BooleanField(default=True)
    source_thought_id = SourceThought(allow_null=True, default=None)
    confidence = serializers.FloatField(min_value=0, max_value=1, required=False)


def _validated(call: Call) -> dict[str, Any]:
    """``data`` validated by the REST endpoint's input for its kind; errors name data.<field>."""
    kind = call.data["kind"]
    body = {**call.data["data"], "upsert": call.data["upsert"]}
    body["source_thought_id"] = call.form.initial_data.get("source_thought_id")
    if "confidence" in call.data and kind != "entity":
        body["confidence"] = call.data["confidence"]
    form = KINDS[kind](data=body, context=call.form.context)
    try:
        form.is_valid(raise_exception=True)
    except serializers.ValidationError as exc:
        raise ToolError(
            validation_message(serializers.ValidationError({"data": exc.detail}))
        ) from None
    return dict(form.validated_data)


def memories_create(call: Call) -> dict[str, Any]:
    kind, values = call.data["kind"], _validated(call)
    if not writes_direct(call.user):
        return _staged(call, kind, values)
    if kind == "entity":
        entity, created = retrying(lambda: services.entity_upsert(**values, viewer=call.user))
        return {"kind": kind, "status": _status(created), "row": _row(KgEntity, entity, call)}
    if kind == "observation":
        entity = values.pop("entity_id")
        obs, created = retrying(
            lambda: services.observation_upsert(
                entity_id=entity.pk if entity else None, viewer=call.user, **values
            )
        )
        return {"kind": kind, "status": _status(created), "row": _row(KgObservation, obs, call)}
    source, target = values.pop("source_id"), values.pop("target_id")
    edge, created = retrying(
        lambda: services.edge_upsert(
            source_id=source.pk, target_id=target.pk, viewer=call.user, **values
        )
    )
    return {"kind": kind, "status": _status(created), "row": _row(KgEdge, edge, call)}


def _row(out: type[serializers.Serializer[Any]], row: Any, call: Call) -> Any:
    """The row as the REST endpoint answers it: its source thought named only to its owner."""
    return out(row, context=source_context(call.user, row)).data


def _status(created: bool) -> str:
    return "created" if created else "updated"


def _staged(call: Call, kind: str, values: dict[str, Any]) -> dict[str, Any]:
    if kind == "entity":
        stage(call.user, entities=[(values["name"], values["entity_type"])])
    elif kind == "relationship":
        ends = (values["source_id"].name, values["target_id"].name)
        stage(call.user, edges=[(*ends, values["rel_type"])])
    else:
        entity = values["entity_id"]
        observation = services.StagedObservation(
            name=values["name"],
            description=values["description"],
            entity_name=entity.name if entity is not None else "",
            entity_id=entity.pk if entity is not None else None,
            data=values["data"],
            confidence=values["confidence"],
        )
        stage(call.user, observations=[observation], thought_id=values["source_thought_id"])
    return {"kind": kind, "status": "pending", "row": None}


class MemoriesCreateOut(serializers.Serializer[Any]):
    kind = serializers.CharField()
    status = serializers.ChoiceField(
        choices=["created", "updated", "pending"],
        help_text="pending: staged for the moderators (you are not one).",
    )
    row = serializers.JSONField(allow_null=True)


class MemoriesModerateInput(Input):
    action = serializers.ChoiceField(choices=["review", "decide", "review_and_decide"])
    target = serializers.ChoiceField(choices=selectors.TARGETS, default="mixed")
    status = serializers.ChoiceField(
        choices=[*CandidateStatus.values, "all"], default=CandidateStatus.PENDING
    )
    min_conf = serializers.FloatField(min_value=0, max_value=1, required=False)
    limit = serializers.IntegerField(min_value=1, max_value=200, default=50)
    offset = serializers.IntegerField(min_value=0, default=0)
    items = KgDecisionItem(many=True, required=False, max_length=200)  # type: ignore[call-arg]
    dry_run = serializers.BooleanField(default=False)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs["action"] != "review" and not attrs.get("items"):
            raise serializers.ValidationError({"items": [f"{attrs['action']} needs items."]})
        return attrs


class MemoriesModerateOut(serializers.Serializer[Any]):
    dry_run = serializers.BooleanField()
    results = KgDecisionOutcome(many=True, allow_null=True)
    total = serializers.IntegerField(allow_null=True)
    candidates = KgCandidate(many=True, allow_null=True)


def memories_moderate(call: Call) -> dict[str, Any]:
    if not may_moderate(call.user):
        raise PermissionDenied("Only knowledge-graph moderators may moderate.")
    params = call.data
    out: dict[str, Any] = {"dry_run": params["dry_run"], "results": None, "total": None}
    out["candidates"] = None
    if params["action"] != "review":
        out["results"] = KgDecisionOutcome(_decide(call), many=True).data
    if params["action"] != "decide":
        out.update(_review(call))
    return out


def _decide(call: Call) -> list[services.DecisionOutcome]:
    return services.candidates_decide(
        items=decision_items(call.data["items"]), reviewer=call.user, dry_run=call.data["dry_run"]
    )


def _review(call: Call) -> dict[str, Any]:
    params = call.data
    page = selectors.candidates_list(
        target=params["target"],
        status=None if params["status"] == "all" else params["status"],
        min_conf=params.get("min_conf"),
        limit=params["limit"],
        offset=params["offset"],
    )
    pending = [c for c in page.rows if isinstance(c, EntityCandidate) and c.status == "pending"]
    found = selectors.suggestions_for(pending, viewer=call.user, k=3)
    suggestions = {("entity", pk): rows for pk, rows in found.items()}
    rows = KgCandidate(page.rows, many=True, context={"suggestions": suggestions}).data
    return {"total": page.count, "candidates": rows}


register(
    Tool(
        name="memories_create",
        description="Create or update (upsert, the default) a KG entity, relationship or "
        "observation. A moderator's write goes into the graph; anyone else's is staged for "
        "the moderators (status pending).",
        input=MemoriesCreateInput,
        output=MemoriesCreateOut,
        run=memories_create,
        idempotent=True,
    )
)
register(
    Tool(
        name="memories_moderate",
        description="Moderators only. review: the candidate queue (target, status, min_conf, "
        "limit, offset) with up to 3 canonical suggestions per entity; decide: approve, "
        "reject or alias items; review_and_decide: decide, then review. dry_run writes nothing.",
        input=MemoriesModerateInput,
        output=MemoriesModerateOut,
        run=memories_moderate,
    )
)
