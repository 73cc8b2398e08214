"""Read side of thoughts over HTTP: list, detail, chain and ``legacymind_search``.

Views validate with the input serializers, call one selector and format. Another user's thought
is a 404 like a missing one; bad filter values are a 400 envelope naming the field.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from kg.api.search import KgSearchHit
from kg.selectors import MemoryHit
from legacymind.api.inputs import query_input
from legacymind.api.schema import error
from legacymind.users import Viewer, signed_in
from thoughts import selectors, services
from thoughts.api.read_inputs import ChainInput, SearchInput, ThoughtFilterInput
from thoughts.models import Thought
from thoughts.selectors import Chain, ChainNode

# --- output -----------------------------------------------------------------------------------
# 400 and 401 come from legacymind.api.schema.AutoSchema, like every view's; these say more.
NOT_FOUND = {404: error("No such thought, or not yours.")}
THOUGHT_ID = OpenApiParameter(
    "id",
    str,
    OpenApiParameter.PATH,
    description="The thought's id: <uuid> or thoughts:<uuid> (as think answers it).",
)
EMBEDDING_DOWN = {503: error("The query could not be embedded.")}


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
    reason = serializers.CharField(allow_null=True, help_text="threshold or floor.")


class ThoughtDetailOut(ThoughtOut):
    # Declared: the model's JSONFields map to an ambiguous schema (oneOf: any, null).
    framework_analysis = serializers.DictField(allow_null=True, read_only=True)
    verification = serializers.DictField(allow_null=True, read_only=True)
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
                    **{key: extra.get(key) for key in ("similarity", "score", "rank", "reason")},
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


class SearchMemoryOut(KgSearchHit):  # the KG search's hit, with its source and age
    source_thought_id = serializers.UUIDField(
        allow_null=True, help_text="Your thought this was drawn from; null if none, or not yours."
    )
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
    total = serializers.IntegerField(
        help_text="How many thoughts are in results (at most top_k), not how many matched."
    )
    top_k = serializers.IntegerField(help_text="top_k_thoughts as asked (after clamping).")
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

    @extend_schema(parameters=[ThoughtFilterInput], responses={200: ThoughtOut(many=True)})
    def list(self, request: Request) -> Response:
        query = query_input(request, ThoughtFilterInput, paged=True)
        rows = selectors.thoughts_list(user=request.user, filters=query.filters())
        page = self.paginate_queryset(rows)
        return self.get_paginated_response(ThoughtOut(page, many=True).data)

    @extend_schema(parameters=[THOUGHT_ID], responses={200: ThoughtDetailOut, **NOT_FOUND})
    def retrieve(self, request: Request, pk: str) -> Response:
        thought = selectors.thought_get(user=request.user, thought_id=pk)
        context = {
            "links": selectors.thought_links(user=request.user, thought=thought),
            "injected": selectors.injected_memories(user=request.user, thought=thought),
        }
        return Response(ThoughtDetailOut(thought, context=context).data)

    @extend_schema(parameters=[THOUGHT_ID], responses={204: None, **NOT_FOUND})
    def destroy(self, request: Request, pk: str) -> Response:
        """Delete one of your thoughts, and what was drawn from it if it is private."""
        services.thought_delete(user=signed_in(request), thought_id=pk)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(parameters=[THOUGHT_ID, ChainInput], responses={200: ChainOut, **NOT_FOUND})
    @action(detail=True, methods=["get"])
    def chain(self, request: Request, pk: str) -> Response:
        query = query_input(request, ChainInput, paged=False)
        thought = selectors.thought_get(user=request.user, thought_id=pk)
        tree: Chain = selectors.thought_chain(
            user=request.user, thought=thought, depth=query.validated_data["depth"]
        )
        return Response(ChainOut(tree).data)


def _memory_hit(hit: MemoryHit, viewer: Viewer) -> dict[str, Any]:
    return {
        "kind": hit.kind,
        "id": hit.id,
        "name": hit.name,
        "entity_type": hit.entity_type,
        "description": hit.description,
        "similarity": round(hit.similarity, 4),
        # The thought a memory came from is named to its owner only (kg.api.fields).
        "source_thought_id": hit.source_for(viewer),
        "created_at": hit.created_at,
    }


def _thought_hit(hit: selectors.Hit) -> dict[str, Any]:
    names = [name for name in SearchThoughtOut._declared_fields if name != "similarity"]
    return {
        **{name: getattr(hit.row, name) for name in names},
        "similarity": round(hit.similarity, 4),
    }


def search_answer(form: SearchInput, viewer: Viewer) -> dict[str, Any]:
    """``legacymind_search`` for a validated ``form``, rendered by ``SearchOut``: the one path
    of the REST endpoint and the MCP tool."""
    params = form.validated_data
    result = selectors.search(
        user=viewer,
        query=params["query"],
        target=params["target"],
        include_thoughts=params["include_thoughts"],
        top_k_memories=params["top_k_memories"],
        top_k_thoughts=params["top_k_thoughts"],
        sim_thresh=params["sim_thresh"],
        filters=form.filters(),
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
        "memories": {"items": [_memory_hit(hit, viewer) for hit in result.memories]},
        "thoughts": thoughts,
    }
    return dict(SearchOut(body).data)


@extend_schema(tags=["thoughts"])
class SearchView(APIView):
    """``legacymind_search``: KG memories and, on request, your thoughts nearest to a text."""

    @extend_schema(request=SearchInput, responses={200: SearchOut, **EMBEDDING_DOWN})
    def post(self, request: Request) -> Response:
        form = SearchInput(data=request.data)
        form.is_valid(raise_exception=True)
        return Response(search_answer(form, request.user))
