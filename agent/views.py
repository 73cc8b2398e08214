"""Thin HTTP layer of the journaling agent. Bodies are validated by the pydantic contracts in
agent/schemas.py; drf-spectacular documents them through its pydantic extension."""

from __future__ import annotations

from typing import Any

import drf_spectacular.contrib.pydantic  # noqa: F401  (registers the pydantic schema extension)
from django.http import HttpRequest, HttpResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from prometheus_client import CONTENT_TYPE_LATEST
from pydantic import BaseModel, RootModel, ValidationError
from rest_framework.parsers import JSONParser
from rest_framework.request import Request
from rest_framework.views import APIView

from agent import metrics
from agent.excavations import completed_result, excavation_start, excavation_step
from agent.reflections import reflection_create
from agent.schemas import (
    AgentActRequest,
    AgentActResponse,
    ExcavationRequest,
    ExcavationResponse,
    Reflection,
    ReflectionRequest,
    V2ReflectionRequest,
)
from agent.services import agent_act, pydantic_fields, rate_guard
from legacymind.errors import ServiceError, envelope


class AgentActBody(RootModel[AgentActRequest]):
    """Either an init request (journal entry) or a continue request (signed state + answer)."""


ERRORS = {
    400: "Invalid input (error_code invalid / answer_required).",
    409: "integrity_mismatch, stale_revision, revision_in_progress or state_complete.",
    410: "answer_mismatch: user_event.answer_to is not the open question.",
    429: "budget_exhausted or rate_limited.",
}


def client_id(request: Request) -> str:
    """Whom the rate and budget guards count: the signed-in user (every view here needs one,
    the project's default permission)."""
    return f"user:{request.user.pk}"


class AgentActView(APIView):
    """The stateless agent loop: the state travels with each request, signed by the server."""

    parser_classes = [JSONParser]

    @extend_schema(
        operation_id="postAgentAct",
        request=AgentActBody,
        responses={200: AgentActResponse, **{code: dict for code in ERRORS}},
        parameters=[
            OpenApiParameter(
                "Idempotency-Key",
                str,
                OpenApiParameter.HEADER,
                required=False,
                description="With (state_id, revision): replays the same body for 2 minutes.",
            )
        ],
        description="Runs one turn of the FACD loop. "
        + " ".join(f"{k}: {v}" for k, v in ERRORS.items()),
        tags=["agent"],
    )
    def post(self, request: Request) -> HttpResponse:
        body = agent_act(
            data=request.data,
            idempotency_key=request.headers.get("Idempotency-Key"),
            client_id=client_id(request),
        )
        return HttpResponse(body, content_type="application/json")


def metrics_view(request: HttpRequest) -> HttpResponse:
    """Prometheus exposition: every gunicorn worker's counters (see agent.metrics)."""
    if request.method != "GET":
        import json

        return HttpResponse(
            json.dumps(envelope(405, "Use GET.")), status=405, content_type="application/json"
        )
    return HttpResponse(metrics.exposition(), content_type=CONTENT_TYPE_LATEST)


def _validated(model: type[BaseModel], data: Any) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        fields = pydantic_fields(exc)
        first = next(iter(fields.items()))
        raise ServiceError(f"Invalid input. {first[0]}: {first[1][0]}", fields=fields) from exc


def _json(model: BaseModel) -> HttpResponse:
    return HttpResponse(model.model_dump_json(), content_type="application/json")


class ReflectionView(APIView):
    """v1: one-shot Reflection from a journal entry."""

    parser_classes = [JSONParser]

    @extend_schema(
        request=ReflectionRequest,
        responses={200: Reflection},
        tags=["agent"],
        operation_id="postReflection",
    )
    def post(self, request: Request) -> HttpResponse:
        rate_guard(client_id=client_id(request))
        body = _validated(ReflectionRequest, request.data)
        return _json(reflection_create(entry=body.journal_entry))


class ExcavationView(APIView):
    """v2: interactive excavation. ``mode=init`` with the entry, ``mode=step`` with the signed
    state, the reply and the id of the probe being answered."""

    parser_classes = [JSONParser]

    @extend_schema(
        request=ExcavationRequest,
        responses={200: ExcavationResponse, 409: dict, 410: dict, 422: dict},
        tags=["agent"],
        operation_id="postExcavation",
    )
    def post(self, request: Request) -> HttpResponse:
        rate_guard(client_id=client_id(request))
        body = _validated(ExcavationRequest, request.data)
        if body.mode == "init":
            if body.journal_entry is None:
                raise ServiceError(
                    "journal_entry is required for mode=init.",
                    fields={"journal_entry": ["required"]},
                )
            return _json(excavation_start(entry=body.journal_entry))
        if body.state is None or body.user_reply is None or body.expected_probe_id is None:
            raise ServiceError(
                "state, user_reply and expected_probe_id are required for mode=step.",
                fields={"state": ["required"]},
            )
        return _json(
            excavation_step(
                state=body.state,
                user_reply=body.user_reply,
                expected_probe_id=body.expected_probe_id,
            )
        )


class V2ReflectionView(APIView):
    """v2: a Reflection focused on the crux a completed excavation confirmed."""

    parser_classes = [JSONParser]

    @extend_schema(
        request=V2ReflectionRequest,
        responses={200: Reflection, 409: dict},
        tags=["agent"],
        operation_id="postV2Reflection",
    )
    def post(self, request: Request) -> HttpResponse:
        rate_guard(client_id=client_id(request))
        body = _validated(V2ReflectionRequest, request.data)
        result = completed_result(body.state)
        return _json(
            reflection_create(entry=body.state.journal_entry, focus=result.confirmed_crux.text)
        )
