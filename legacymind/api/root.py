from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView


class ApiRootView(APIView):
    """Links to the main collections of the v1 API."""

    @extend_schema(responses={200: dict})
    def get(self, request: Request) -> Response:
        def link(name: str) -> str | None:
            try:
                return reverse(name, request=request)
            except Exception:
                return None

        names = {
            "think": "think",
            "thoughts": "thought-list",
            "kg_entities": "kg-entity-list",
            "kg_candidates": "kg-candidate-list",
            "inner_voice": "inner-voice",
            "inner_voice_threads": "inner-voice-thread-list",
            "schema": "schema",
            "docs": "swagger-ui",
        }
        return Response({key: link(name) for key, name in names.items()})
