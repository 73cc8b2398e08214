"""Read side of thoughts over HTTP: list, detail, chain and ``legacymind_search``.

Views validate with the input serializers, call one selector and format. Another user's thought
is a 404 like a missing one; bad filter values are a 400 envelope naming the field.
"""

from __future__ import annotations

import uuid
from dataclasses import asdict
from datetime import datetime, time
from typing import Any

from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from thoughts import selectors
from thoughts.models import Thought
from thoughts.selectors import Chain, ChainNode, ThoughtFilters


# --- input ------------------------------------------------------------------------------------
@extend_schema_field(OpenApiTypes.STR)
class ThoughtRefField(serializers.Field):  # type: ignore[type-arg]
    default_error_messages = {"invalid": "Expected a thought id: <uuid> or thoughts:<uuid>."}

    def to_internal_value(self, data: Any) -> uuid.UUID:
        try:
            return uuid.UUID(str(data).strip().removeprefix("thoughts:"))
        except ValueError:
            self.fail("invalid")
            raise  # unreachable: fail() raises

    def to_representation(self, value: Any) -> str:
        return str(value)


@extend_schema_field(OpenApiTypes.STR)
class DateBoundField(serializers.Field):  # type: ignore[type-arg]
    """``YYYY-MM-DD`` (the whole day, in the server's time zone) or an ISO 8601 date-time."""

    default_error_messages = {"invalid": "Expected YYYY-MM-DD or an ISO 8601 date-time."}

    def __init__(self, *, end_of_day: bool, **kwargs: Any) -> None:
        self.end_of_day = end_of_day
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> datetime:
        text = str(data).strip()
        try:
            day = parse_date(text)
            moment = parse_datetime(text) if day is None else None
        except ValueError:  # well-formed but impossible, e.g. 2025-02-30
            day = moment = None
        if day is not None:
            moment = datetime.combine(day, time.max if self.end_of_day else time.min)
        if moment is None:
            self.fail("invalid")
            raise AssertionError("unreachable")
        return timezone.make_aware(moment) if timezone.is_naive(moment) else moment

    def to_representation(self, value: Any) -> str:
        return str(value)


class ClampedIntegerField(serializers.IntegerField):
    """Lenient like the original tools: a number out of range is clamped, not refused."""

    def __init__(self, *, low: int, high: int, **kwargs: Any) -> None:
        self.low, self.high = low, high
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> int:
        return max(self.low, min(self.high, super().to_internal_value(data)))


class ClampedFloatField(serializers.FloatField):
    def __init__(self, *, low: float, high: float, **kwargs: Any) -> None:
        self.low, self.high = low, high
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> float:
        return max(self.low, min(self.high, super().to_internal_value(data)))


class TagsField(serializers.ListField):
    """Tags as a JSON list, repeated query parameters, or one comma-separated value."""

    child = serializers.RegexField(r"^[\w.-]{1,64}$")

    def to_internal_value(self, data: Any) -> list[str]:
        if isinstance(data, str):
            data = [data]
        if isinstance(data, list) and all(isinstance(item, str) for item in data):
            data = [tag.strip() for item in data for tag in item.split(",") if tag.strip()]
        return super().to_internal_value(data)


class ThoughtFilterInput(serializers.Serializer[Any]):
    session_id = serializers.CharField(max_length=128, required=False)
    chain_id = serializers.CharField(max_length=128, required=False)
    previous_thought_id = ThoughtRefField(required=False)
    revises_thought = ThoughtRefField(required=False)
    branch_from = ThoughtRefField(required=False)
    origin = serializers.ChoiceField(choices=Thought.Origin.choices, required=False)
    mode = serializers.RegexField(r"^[a-z_]{1,32}$", required=False)
    tags = TagsField(required=False, help_text="Comma-separated, repeated, or a JSON list.")
    tags_match = serializers.ChoiceField(choices=["any", "all"], default="any")
    date_from = DateBoundField(end_of_day=False, required=False, help_text="Inclusive.")
    date_to = DateBoundField(end_of_day=True, required=False, help_text="Inclusive.")
    confidence_gte = ClampedFloatField(low=0.0, high=1.0, required=False)
    confidence_lte = ClampedFloatField(low=0.0, high=1.0, required=False)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        start, end = attrs.get("date_from"), attrs.get("date_to")
        if start is not None and end is not None and start > end:
            raise serializers.ValidationError({"date_from": "date_from is after date_to."})
        low, high = attrs.get("confidence_gte"), attrs.get("confidence_lte")
        if low is not None and high is not None and low > high:
            raise serializers.ValidationError(
                {"confidence_gte": "confidence_gte is above confidence_lte."}
            )
        return attrs

    def filters(self) -> ThoughtFilters:
        data = self.validated_data
        return ThoughtFilters(
            **{name: data.get(name) for name in _DIRECT},
            tags=tuple(data.get("tags") or ()),
            tags_match=data["tags_match"],
            created_gte=data.get("date_from"),
            created_lte=data.get("date_to"),
        )


_DIRECT = (
    "session_id", "chain_id", "previous_thought_id", "revises_thought", "branch_from", "origin",
    "mode", "confidence_gte", "confidence_lte",
)  # fmt: skip


class SearchInput(ThoughtFilterInput):
    query = serializers.CharField(max_length=10_000, help_text="Text to embed and search for.")
    target = serializers.ChoiceField(
        choices=selectors.SEARCH_TARGETS,
        default="mixed",
        help_text="KG memories (entity, observation, mixed = both) or only thoughts.",
    )
    include_thoughts = serializers.BooleanField(
        default=False, help_text="Also search your thoughts (implied by target=thoughts)."
    )
    top_k_memories = ClampedIntegerField(low=1, high=50, default=10, help_text="1-50.")
    top_k_thoughts = ClampedIntegerField(low=1, high=50, default=5, help_text="1-50.")
    sim_thresh = ClampedFloatField(low=0.0, high=1.0, default=0.0, help_text="0-1, inclusive.")
    order = serializers.ChoiceField(
        choices=selectors.SEARCH_ORDERS,
        required=False,
        help_text="Of thoughts. Default: created_at_asc with session_id/chain_id, else similarity.",
    )


class ChainInput(serializers.Serializer[Any]):
    depth = serializers.IntegerField(min_value=1, max_value=selectors.CHAIN_MAX_DEPTH, default=10)


# --- output -----------------------------------------------------------------------------------
class ThoughtOut(serializers.ModelSerializer[Thought]):
    previous_thought_id = serializers.UUIDField(allow_null=True, read_only=True)
    revises_thought_id = serializers.UUIDField(allow_null=True, read_only=True)
    branch_from_id = serializers.UUIDField(allow_null=True, read_only=True)

    class Meta:
        model = Thought
        fields = [
            "id", "content", "created_at", "mode", "submode", "status", "origin", "tags",
            "is_private", "session_id", "chain_id", "previous_thought_id", "revises_thought_id",
            "branch_from_id", "confidence", "significance", "injection_scale", "access_count",
            "embedding_model", "embedding_dim",
        ]  # fmt: skip


class LinkOut(serializers.Serializer[Any]):
    id = serializers.UUIDField()
    status = serializers.ChoiceField(
        choices=["record", "string"],
        help_text="record: a thought you can open; string: not resolvable (yet).",
    )


class LinksOut(serializers.Serializer[Any]):
    previous_thought = LinkOut(allow_null=True)
    revises_thought = LinkOut(allow_null=True)
    branch_from = LinkOut(allow_null=True)


class EmbeddingOut(serializers.Serializer[Any]):
    provider = serializers.CharField(source="embedding_provider", allow_null=True)
    model = serializers.CharField(source="embedding_model", allow_null=True)
    dim = serializers.IntegerField(source="embedding_dim", allow_null=True)
    embedded_at = serializers.DateTimeField(allow_null=True)


class InjectedMemoryOut(serializers.Serializer[Any]):
    kind = serializers.CharField(allow_null=True)
    id = serializers.IntegerField(allow_null=True)
    available = serializers.BooleanField(help_text="False when the memory is gone or not yours.")
    name = serializers.CharField(allow_null=True)
    entity_type = serializers.CharField(allow_null=True)
    description = serializers.CharField(allow_null=True)
    similarity = serializers.FloatField(allow_null=True)
    score = serializers.FloatField(allow_null=True)
    rank = serializers.IntegerField(allow_null=True)
    why = serializers.CharField(allow_null=True)


class ThoughtDetailOut(ThoughtOut):
    embedding = serializers.SerializerMethodField()
    links = serializers.SerializerMethodField()
    injected_memories = serializers.SerializerMethodField()

    class Meta(ThoughtOut.Meta):
        fields = [
            *ThoughtOut.Meta.fields, "last_accessed", "enriched_content", "framework_enhanced",
            "framework_analysis", "verification", "embedding", "links", "injected_memories",
        ]  # fmt: skip

    @extend_schema_field(EmbeddingOut)
    def get_embedding(self, obj: Thought) -> dict[str, Any]:
        return EmbeddingOut(obj).data

    @extend_schema_field(LinksOut)
    def get_links(self, obj: Thought) -> dict[str, Any]:
        return LinksOut(self.context["links"]).data

    @extend_schema_field(InjectedMemoryOut(many=True))
    def get_injected_memories(self, obj: Thought) -> Any:
        out = []
        for memory in self.context["injected"]:
            row, extra = memory.row, memory.extra
            out.append(
                {
                    "kind": memory.kind,
                    "id": memory.id,
                    "available": row is not None,
                    # Not the name stored at injection time: the row may be hidden from this viewer.
                    "name": row.name if row is not None else None,
                    "entity_type": getattr(row, "entity_type", None),
                    "description": row.description if row is not None else None,
                    **{key: extra.get(key) for key in ("similarity", "score", "rank", "why")},
                }
            )
        return InjectedMemoryOut(out, many=True).data


class ChainNodeOut(serializers.Serializer[Any]):
    id = serializers.UUIDField(source="thought.id")
    relation = serializers.ChoiceField(choices=["root", "successor", "revision", "branch"])
    is_focus = serializers.BooleanField()
    content_preview = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField(source="thought.created_at")
    mode = serializers.CharField(source="thought.mode", allow_null=True)
    origin = serializers.CharField(source="thought.origin", allow_null=True)
    is_private = serializers.BooleanField(source="thought.is_private")
    confidence = serializers.FloatField(source="thought.confidence", allow_null=True)
    session_id = serializers.CharField(source="thought.session_id", allow_null=True)
    chain_id = serializers.CharField(source="thought.chain_id", allow_null=True)

    def get_content_preview(self, node: ChainNode) -> str:
        text: str = node.thought.preview  # type: ignore[attr-defined]
        limit = selectors.CHAIN_PREVIEW_CHARS
        return text if len(text) <= limit else text[: limit - 1] + "…"


# A tree: each node lists its successors, revisions and branches, which are nodes again.
for _bucket in ("successors", "revisions", "branches"):
    ChainNodeOut._declared_fields[_bucket] = ChainNodeOut(many=True)


class ChainOut(serializers.Serializer[Any]):
    focus_id = serializers.UUIDField()
    ancestors = serializers.IntegerField(help_text="Levels above the focus.")
    truncated = serializers.BooleanField(help_text="The depth or node limit cut something off.")
    root = ChainNodeOut()


class SearchMemoryOut(serializers.Serializer[Any]):
    kind = serializers.ChoiceField(choices=["entity", "observation"])
    id = serializers.IntegerField()
    name = serializers.CharField()
    entity_type = serializers.CharField(allow_null=True)
    description = serializers.CharField()
    similarity = serializers.FloatField()
    source_thought_id = serializers.UUIDField(allow_null=True)
    created_at = serializers.DateTimeField()


class SearchThoughtOut(serializers.Serializer[Any]):
    id = serializers.UUIDField()
    content = serializers.CharField()
    similarity = serializers.FloatField()
    significance = serializers.FloatField()
    created_at = serializers.DateTimeField()
    mode = serializers.CharField(allow_null=True)
    origin = serializers.CharField(allow_null=True)
    tags = serializers.ListField(child=serializers.CharField())
    confidence = serializers.FloatField(allow_null=True)
    session_id = serializers.CharField(allow_null=True)
    chain_id = serializers.CharField(allow_null=True)
    is_private = serializers.BooleanField()


class SearchMemoriesOut(serializers.Serializer[Any]):
    items = SearchMemoryOut(many=True)


class SearchThoughtsOut(serializers.Serializer[Any]):
    total = serializers.IntegerField()
    top_k = serializers.IntegerField()
    order = serializers.ChoiceField(choices=selectors.SEARCH_ORDERS)
    results = SearchThoughtOut(many=True)


class SearchEmbeddingOut(serializers.Serializer[Any]):
    provider = serializers.CharField()
    model = serializers.CharField()
    dim = serializers.IntegerField()


class SearchOut(serializers.Serializer[Any]):
    embedding = SearchEmbeddingOut()
    memories = SearchMemoriesOut()
    thoughts = SearchThoughtsOut(allow_null=True, help_text="null unless thoughts were searched.")


# --- views ------------------------------------------------------------------------------------
@extend_schema(tags=["thoughts"])
class ThoughtViewSet(viewsets.GenericViewSet):  # type: ignore[type-arg]
    """Your thoughts. Another user's thought answers 404, as if it did not exist."""

    serializer_class = ThoughtOut
    lookup_value_regex = "[^/]+"

    @extend_schema(parameters=[ThoughtFilterInput])
    def list(self, request: Request) -> Response:
        query = ThoughtFilterInput(data=request.query_params)
        query.is_valid(raise_exception=True)
        rows = selectors.thoughts_list(user=request.user, filters=query.filters())
        page = self.paginate_queryset(rows)
        return self.get_paginated_response(ThoughtOut(page, many=True).data)

    @extend_schema(responses=ThoughtDetailOut)
    def retrieve(self, request: Request, pk: str) -> Response:
        thought = selectors.thought_get(user=request.user, thought_id=pk)
        context = {
            "links": selectors.thought_links(user=request.user, thought=thought),
            "injected": selectors.injected_memories(user=request.user, thought=thought),
        }
        return Response(ThoughtDetailOut(thought, context=context).data)

    @extend_schema(parameters=[ChainInput], responses=ChainOut)
    @action(detail=True, methods=["get"])
    def chain(self, request: Request, pk: str) -> Response:
        query = ChainInput(data=request.query_params)
        query.is_valid(raise_exception=True)
        thought = selectors.thought_get(user=request.user, thought_id=pk)
        tree: Chain = selectors.thought_chain(
            user=request.user, thought=thought, depth=query.validated_data["depth"]
        )
        return Response(ChainOut(tree).data)


def _memory_hit(hit: selectors.Hit) -> dict[str, Any]:
    row = hit.row
    return {
        "kind": hit.kind,
        "id": row.pk,
        "name": row.name,
        "entity_type": getattr(row, "entity_type", None),
        "description": row.description,
        "similarity": round(hit.similarity, 4),
        "source_thought_id": row.source_thought_id,
        "created_at": row.created_at,
    }


def _thought_hit(hit: selectors.Hit) -> dict[str, Any]:
    names = [name for name in SearchThoughtOut._declared_fields if name != "similarity"]
    return {
        **{name: getattr(hit.row, name) for name in names},
        "similarity": round(hit.similarity, 4),
    }


@extend_schema(tags=["thoughts"])
class SearchView(APIView):
    """``legacymind_search``: KG memories and, on request, your thoughts nearest to a text."""

    @extend_schema(request=SearchInput, responses=SearchOut)
    def post(self, request: Request) -> Response:
        data = SearchInput(data=request.data)
        data.is_valid(raise_exception=True)
        params = data.validated_data
        result = selectors.search(
            user=request.user,
            query=params["query"],
            target=params["target"],
            include_thoughts=params["include_thoughts"],
            top_k_memories=params["top_k_memories"],
            top_k_thoughts=params["top_k_thoughts"],
            sim_thresh=params["sim_thresh"],
            filters=data.filters(),
            order=params.get("order"),
        )
        thoughts = None
        if result.thoughts is not None:
            thoughts = {
                "total": len(result.thoughts),
                "top_k": params["top_k_thoughts"],
                "order": result.order,
                "results": [_thought_hit(hit) for hit in result.thoughts],
            }
        body = {
            "embedding": asdict(result.embedding),
            "memories": {"items": [_memory_hit(hit) for hit in result.memories]},
            "thoughts": thoughts,
        }
        return Response(SearchOut(body).data)
