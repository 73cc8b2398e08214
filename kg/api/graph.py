"""Entities, observations and edges: read for every user, write for moderators."""

from __future__ import annotations

from typing import Any

from django.db.models import Q, QuerySet
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from kg import selectors, services
from kg.api.fields import OwnSourceThought, SourceThought, VisibleEntity, source_context
from kg.api.permissions import ReadOrModerate
from kg.models import Edge, Entity, Observation
from kg.selectors import visible_edges
from kg.selectors.visibility import memories_visible_to
from legacymind.api.fields import JSONObjectField
from legacymind.api.inputs import Input, query_input, replacing
from legacymind.api.schema import error


class KgEntity(serializers.ModelSerializer[Entity]):
    source_thought_id = OwnSourceThought()
    embedded = serializers.SerializerMethodField()

    class Meta:
        model = Entity
        fields = [
            "id", "name", "entity_type", "description", "data", "aliases", "source_thought_id",
            "significance", "embedded", "created_at", "updated_at",
        ]  # fmt: skip

    def get_embedded(self, obj: Entity) -> bool:
        return obj.embedding_dim is not None


# A description is embedded with its name (observations) and shown in every injection: past a
# few pages it would be cut by the embedder and crowd the enriched content, so it is refused.
MAX_DESCRIPTION = 10_000


class KgEntityInput(Input):
    name = serializers.CharField(max_length=255)
    entity_type = serializers.CharField(max_length=64, default="concept")
    description = serializers.CharField(allow_blank=True, default="", max_length=MAX_DESCRIPTION)
    data = JSONObjectField(default=dict)  # type: ignore[assignment]
    aliases = serializers.ListField(child=serializers.CharField(max_length=255), default=list)
    source_thought_id = SourceThought(allow_null=True, default=None)
    upsert = serializers.BooleanField(default=True)


class KgEntityPatch(Input):
    name = serializers.CharField(max_length=255, required=False)
    entity_type = serializers.CharField(max_length=64, required=False)
    description = serializers.CharField(
        allow_blank=True, required=False, max_length=MAX_DESCRIPTION
    )
    data = JSONObjectField(required=False)  # type: ignore[assignment]
    aliases = serializers.ListField(child=serializers.CharField(max_length=255), required=False)
    significance = serializers.FloatField(min_value=0, max_value=1, required=False)


class KgEntityBrief(serializers.ModelSerializer[Entity]):
    class Meta:
        model = Entity
        fields = ["id", "name", "entity_type"]


class KgEdge(serializers.ModelSerializer[Edge]):
    source = KgEntityBrief()  # type: ignore[assignment]
    target = KgEntityBrief()
    source_thought_id = OwnSourceThought()

    class Meta:
        model = Edge
        fields = [
            "id", "source", "target", "rel_type", "data", "confidence", "source_thought_id",
            "created_at",
        ]  # fmt: skip


class KgEdgeInput(Input):
    source_id = VisibleEntity()
    target_id = VisibleEntity()
    rel_type = serializers.RegexField(r"^[A-Za-z][\w ]*$", max_length=64)
    data = JSONObjectField(default=dict)  # type: ignore[assignment]
    confidence = serializers.FloatField(min_value=0, max_value=1, default=1.0)
    source_thought_id = SourceThought(allow_null=True, default=None)
    upsert = serializers.BooleanField(default=True)


class KgObservation(serializers.ModelSerializer[Observation]):
    entity_id = serializers.IntegerField(allow_null=True)
    source_thought_id = OwnSourceThought()

    class Meta:
        model = Observation
        fields = [
            "id", "name", "description", "data", "entity_id", "source_thought_id", "confidence",
            "created_at", "updated_at",
        ]  # fmt: skip


class KgObservationPatch(Input):
    name = serializers.CharField(max_length=255, required=False)
    description = serializers.CharField(
        allow_blank=True, required=False, max_length=MAX_DESCRIPTION
    )
    data = JSONObjectField(required=False)  # type: ignore[assignment]
    entity_id = VisibleEntity(allow_null=True, required=False)
    confidence = serializers.FloatField(min_value=0, max_value=1, required=False)


class KgEdgePatch(Input):
    rel_type = serializers.RegexField(r"^[A-Za-z][\w ]*$", max_length=64, required=False)
    data = JSONObjectField(required=False)  # type: ignore[assignment]
    confidence = serializers.FloatField(min_value=0, max_value=1, required=False)


# PUT replaces what PATCH changes: each body takes the same fields, all of them required.
KgEntityReplace = replacing(KgEntityPatch)
KgObservationReplace = replacing(KgObservationPatch)
KgEdgeReplace = replacing(KgEdgePatch)


class KgObservationInput(Input):
    name = serializers.CharField(max_length=255)
    description = serializers.CharField(allow_blank=True, default="", max_length=MAX_DESCRIPTION)
    data = JSONObjectField(default=dict)  # type: ignore[assignment]
    entity_id = VisibleEntity(allow_null=True, default=None)
    source_thought_id = SourceThought(allow_null=True, default=None)
    confidence = serializers.FloatField(min_value=0, max_value=1, default=1.0)
    upsert = serializers.BooleanField(default=True)


CONFLICT = {
    409: error(
        "Another row has this natural key (create with upsert false, or a rename). When that "
        "row is one you cannot see, the answer names no row and nothing is written."
    )
}


class _GraphViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet,  # type: ignore[type-arg]
):
    permission_classes = [ReadOrModerate]

    def get_serializer(self, *args: Any, **kwargs: Any) -> Any:
        # Every answer, lists included, shows a source thought to its owner only.
        rows = (args[0] if kwargs.get("many") else [args[0]]) if args else []
        kwargs["context"] = {
            **self.get_serializer_context(),
            **source_context(self.request.user, *rows),
        }
        return super().get_serializer(*args, **kwargs)


def list_filters(request: Request, filters: type[Input]) -> dict[str, Any]:
    """A list's query filters, validated: a bad value or an unknown name is a 400 naming it, not
    a 500 or a quietly wrong page."""
    return dict(query_input(request, filters, paged=True).validated_data)


@extend_schema(tags=["kg"])
class EntityViewSet(_GraphViewSet):
    serializer_class = KgEntity

    def get_queryset(self) -> QuerySet[Entity]:
        qs = memories_visible_to(self.request.user, Entity).order_by("name", "id")
        if self.action == "list":
            qs = qs.defer("embedding")  # ~1.5 KB a row that no list shows
            query = list_filters(self.request, self.Filters)
            if q := query.get("q"):
                qs = qs.filter(name__icontains=q)
            if entity_type := query.get("entity_type"):
                qs = qs.filter(entity_type__iexact=entity_type)
        return qs

    class Filters(Input):
        q = serializers.CharField(
            max_length=255, required=False, allow_blank=True, help_text="Part of the name."
        )
        entity_type = serializers.CharField(max_length=64, required=False, allow_blank=True)

    @extend_schema(parameters=[Filters])
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().list(request, *args, **kwargs)

    @extend_schema(request=KgEntityInput, responses={201: KgEntity, 200: KgEntity, **CONFLICT})
    def create(self, request: Request) -> Response:
        data = KgEntityInput(data=request.data, context={"request": request})
        data.is_valid(raise_exception=True)
        entity, created = services.entity_upsert(**data.validated_data, viewer=request.user)
        code = status.HTTP_201_CREATED if created else status.HTTP_200_OK
        return Response(self.get_serializer(entity).data, status=code)

    @extend_schema(request=KgEntityPatch, responses={200: KgEntity, **CONFLICT})
    def partial_update(self, request: Request, pk: str) -> Response:
        return self._change(KgEntityPatch(data=request.data, partial=True))

    @extend_schema(request=KgEntityReplace, responses={200: KgEntity, **CONFLICT})
    def update(self, request: Request, pk: str) -> Response:
        return self._change(KgEntityReplace(data=request.data))

    def _change(self, data: Input) -> Response:
        data.is_valid(raise_exception=True)
        entity = services.entity_update(entity=self.get_object(), **data.validated_data)
        return Response(self.get_serializer(entity).data)

    class NeighborsQuery(Input):
        depth = serializers.ChoiceField(
            choices=[1, 2], default=1, help_text="Hops from the entity: 1 or 2.",
            error_messages={"invalid_choice": "Must be 1 or 2."},
        )  # fmt: skip

    @extend_schema(
        parameters=[NeighborsQuery],
        responses=inline_serializer(
            "KgEntityNeighbors",
            {
                "entity": KgEntity(),
                "nodes": KgEntity(many=True),
                "edges": KgEdge(many=True),
            },
        ),
    )
    @action(detail=True, methods=["get"], url_path="neighbors")
    def neighbors(self, request: Request, pk: str) -> Response:
        depth = query_input(request, self.NeighborsQuery, paged=False).validated_data["depth"]
        entity = self.get_object()
        nodes, edges = selectors.entity_neighbors(entity=entity, depth=depth, viewer=request.user)
        context = source_context(request.user, entity, *nodes, *edges)
        return Response(
            {
                "entity": KgEntity(entity, context=context).data,
                "nodes": KgEntity(nodes, many=True, context=context).data,
                "edges": KgEdge(edges, many=True, context=context).data,
            }
        )


@extend_schema(tags=["kg"])
class ObservationViewSet(_GraphViewSet):
    serializer_class = KgObservation

    def get_queryset(self) -> QuerySet[Observation]:
        qs = memories_visible_to(self.request.user, Observation).order_by("-created_at", "-id")
        if self.action == "list":
            qs = qs.defer("embedding")
            if entity := list_filters(self.request, self.Filters).get("entity"):
                qs = qs.filter(entity_id=entity)
        return qs

    class Filters(Input):
        entity = serializers.IntegerField(
            min_value=1, required=False, help_text="Only this entity's observations."
        )

    @extend_schema(parameters=[Filters])
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().list(request, *args, **kwargs)

    @extend_schema(
        request=KgObservationInput, responses={201: KgObservation, 200: KgObservation, **CONFLICT}
    )
    def create(self, request: Request) -> Response:
        data = KgObservationInput(data=request.data, context={"request": request})
        data.is_valid(raise_exception=True)
        values = dict(data.validated_data)
        entity = values.pop("entity_id")
        obs, created = services.observation_upsert(
            entity_id=entity.pk if entity else None, viewer=request.user, **values
        )
        code = status.HTTP_201_CREATED if created else status.HTTP_200_OK
        return Response(self.get_serializer(obs).data, status=code)

    @extend_schema(request=KgObservationPatch, responses={200: KgObservation, **CONFLICT})
    def partial_update(self, request: Request, pk: str) -> Response:
        context = {"request": request}
        return self._change(KgObservationPatch(data=request.data, partial=True, context=context))

    @extend_schema(request=KgObservationReplace, responses={200: KgObservation, **CONFLICT})
    def update(self, request: Request, pk: str) -> Response:
        return self._change(KgObservationReplace(data=request.data, context={"request": request}))

    def _change(self, data: Input) -> Response:
        data.is_valid(raise_exception=True)
        changes = dict(data.validated_data)
        if "entity_id" in changes:
            entity = changes.pop("entity_id")
            changes["entity_id"] = entity.pk if entity else None
        obs = services.observation_update(observation=self.get_object(), **changes)
        return Response(self.get_serializer(obs).data)


@extend_schema(tags=["kg"])
class EdgeViewSet(_GraphViewSet):
    serializer_class = KgEdge

    def get_queryset(self) -> QuerySet[Edge]:
        qs = visible_edges(self.request.user).order_by("-created_at", "-id")
        qs = qs.defer("source__embedding", "target__embedding")
        if self.action == "list":
            query = list_filters(self.request, self.Filters)
            if entity := query.get("entity"):
                qs = qs.filter(Q(source_id=entity) | Q(target_id=entity))
            if rel_type := query.get("rel_type"):
                qs = qs.filter(rel_type=rel_type)
        return qs

    class Filters(Input):
        entity = serializers.IntegerField(
            min_value=1, required=False, help_text="Edges from or to this entity."
        )
        rel_type = serializers.CharField(max_length=64, required=False, allow_blank=True)

    @extend_schema(parameters=[Filters])
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().list(request, *args, **kwargs)

    @extend_schema(request=KgEdgeInput, responses={201: KgEdge, 200: KgEdge, **CONFLICT})
    def create(self, request: Request) -> Response:
        data = KgEdgeInput(data=request.data, context={"request": request})
        data.is_valid(raise_exception=True)
        values = dict(data.validated_data)
        edge, created = services.edge_upsert(
            source_id=values.pop("source_id").pk,
            target_id=values.pop("target_id").pk,
            viewer=request.user,
            **values,
        )
        code = status.HTTP_201_CREATED if created else status.HTTP_200_OK
        edge = Edge.objects.select_related("source", "target").get(pk=edge.pk)
        return Response(self.get_serializer(edge).data, status=code)

    @extend_schema(request=KgEdgePatch, responses={200: KgEdge, **CONFLICT})
    def partial_update(self, request: Request, pk: str) -> Response:
        return self._change(KgEdgePatch(data=request.data, partial=True))

    @extend_schema(request=KgEdgeReplace, responses={200: KgEdge, **CONFLICT})
    def update(self, request: Request, pk: str) -> Response:
        return self._change(KgEdgeReplace(data=request.data))

    def _change(self, data: Input) -> Response:
        data.is_valid(raise_exception=True)
        edge = services.edge_update(edge=self.get_object(), **data.validated_data)
        return Response(self.get_serializer(edge).data)
