"""Semantic search over entities and observations, for every user."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from kg import selectors
from legacymind.api.inputs import Input, query_input
from legacymind.api.schema import error


class Rounded(serializers.FloatField):
    """A similarity, to four places."""

    def to_representation(self, value: float) -> float:  # type: ignore[override]
        return round(float(value), 4)


class KgSearchHit(serializers.Serializer[Any]):
    kind = serializers.ChoiceField(choices=["entity", "observation"])
    id = serializers.IntegerField()
    name = serializers.CharField()
    entity_type = serializers.CharField(allow_null=True)
    description = serializers.CharField()
    similarity = Rounded()


class SearchView(APIView):
    """Semantic search over entities and observations."""

    class Query(Input):
        q = serializers.CharField(max_length=2000)
        target = serializers.ChoiceField(
            choices=["entity", "observation", "mixed"], default="mixed"
        )
        top_k = serializers.IntegerField(min_value=1, max_value=50, default=10)

    @extend_schema(
        tags=["kg"],
        parameters=[Query],
        responses={
            200: KgSearchHit(many=True),
            503: error("The query could not be embedded."),
        },
    )
    def get(self, request: Request) -> Response:
        query = query_input(request, self.Query, paged=False)
        rows = selectors.kg_search(
            query=query.validated_data["q"],
            target=query.validated_data["target"],
            top_k=query.validated_data["top_k"],
            viewer=request.user,
        )
        return Response(KgSearchHit(rows, many=True).data)
