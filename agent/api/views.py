"""The journaling agent's views: validate the body with its input (agent.api.inputs), call
one service, sign a returned state for the client (agent.integrity) and render with the output
the schema documents (agent.api.outputs)."""

from __future__ import annotations

import json

from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from prometheus_client import CONTENT_TYPE_LATEST
from rest_framework.authentication import TokenAuthentication
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agent import metrics
from agent.api.inputs import (
    ACT_BODY,
    EXCAVATION_BODY,
    ReflectionInput,
    V2ReflectionInput,
    act_request,
    excavation_request,
    validated,
)
from agent.api.outputs import AgentActOut, AgentErrorOut, ExcavationOut, ReflectionOut
from agent.errors import AgentError, RateLimited
from agent.excavations import excavation_reflect, excavation_start, excavation_step
from agent.integrity import sign
from agent.reflections import reflection_create
from agent.schemas import JournalEntry
from agent.services import agent_act, rate_guard
from legacymind.api.parsers import JSONParser
from legacymind.errors import envelope


def _errors(descriptions: dict[int, str]) -> dict[int, OpenApiResponse]:
    return {code: OpenApiResponse(AgentErrorOut, description=d) for code, d in descriptions.items()}


ERRORS = {
    400: "Invalid input (error_code invalid / answer_required); `fields` names each field.",
    409: "integrity_mismatch, stale_revision, revision_in_progress or state_complete.",
    410: "answer_mismatch: user_event.answer_to is not the open question (`expected` is).",
    422: "idempotency_key_reused: the Idempotency-Key already answered a different body.",
    429: "budget_exhausted or rate_limited (`retry_after`).",
}
RATE = {429: "rate_limited: more agent turns a minute than allowed (`retry_after`)."}


class AgentView(APIView):
    """Adds an agent error's extra data beside the envelope (see agent.errors)."""

    parser_classes = [JSONParser]  # the project's: a body nested too deeply is a 400
    body_required = True  # every agent body is an object with required fields

    def handle_exception(self, exc: Exception) -> Response:
        response = super().handle_exception(exc)
        if isinstance(exc, AgentError) and exc.extra:
            response.data = {**response.data, **exc.extra}
        if isinstance(exc, RateLimited):
            response["Retry-After"] = str(exc.retry_after)
        return response


def client_id(request: Request | HttpRequest) -> str:
    """Whom the rate and budget guards count, and whom a signed state belongs to
    (agent.integrity): the signed-in user (every view here needs one, the project's default
    permission). The journal pages use it too, so a state started on the page or through the
    API, by session or by token, is the same user's state."""
    return f"user:{request.user.pk}"


class AgentActView(AgentView):
    """The stateless agent loop: the state travels with each request, signed by the server."""

    @extend_schema(
        operation_id="postAgentAct",
        request=ACT_BODY,
        responses={200: AgentActOut, **_errors(ERRORS)},
        parameters=[
            OpenApiParameter(
                "Idempotency-Key",
                str,
                OpenApiParameter.HEADER,
                required=False,
                description="With (state_id, revision): replays the same answer for 2 minutes "
                "to the same request body; a different body with the key is a 422.",
            )
        ],
        description="Runs one turn of the FACD loop. "
        + " ".join(f"{k}: {v}" for k, v in ERRORS.items()),
        tags=["agent"],
    )
    def post(self, request: Request) -> Response:
        client = client_id(request)
        rate_guard(client_id=client)
        response = agent_act(
            act_request(request.data),
            idempotency_key=request.headers.get("Idempotency-Key"),
            client_id=client,
        )
        sign(response.state, client_id=client)
        return Response(AgentActOut(response).data)


def metrics_view(request: HttpRequest) -> HttpResponse:
    """Prometheus exposition: every gunicorn worker's counters (see agent.metrics), for staff
    only, signed in or with a staff user's API token (Prometheus: ``authorization: {type:
    Token, credentials: <key>}``). Every endpoint but the health check and the schema needs
    authentication; the counters say how the agent is used."""
    if request.method != "GET":
        return _envelope(405, "Use GET.")
    user = _metrics_user(request)
    if user is None:
        return _envelope(401, "Authentication credentials were not provided.")
    if not user.is_staff:
        return _envelope(403, "Only staff may read the metrics.")
    return HttpResponse(metrics.exposition(), content_type=CONTENT_TYPE_LATEST)


def _metrics_user(request: HttpRequest) -> User | None:
    """The session's user, else the API token's; None when neither authenticates."""
    if isinstance(request.user, User):
        return request.user
    try:
        found = TokenAuthentication().authenticate(Request(request))
    except AuthenticationFailed:
        return None
    return found[0] if found else None


def _envelope(status: int, detail: str) -> HttpResponse:
    response = HttpResponse(
        json.dumps(envelope(status, detail)), status=status, content_type="application/json"
    )
    if status == 401:
        response["WWW-Authenticate"] = "Token"
    return response


class ReflectionView(AgentView):
    """v1: one-shot Reflection from a journal entry."""

    @extend_schema(
        request=ReflectionInput,
        responses={
            200: ReflectionOut,
            **_errors({422: "guardrail: the entry suggests a risk of harm.", **RATE}),
        },
        tags=["agent"],
        operation_id="postReflection",
    )
    def post(self, request: Request) -> Response:
        rate_guard(client_id=client_id(request))
        entry = validated(ReflectionInput(data=request.data)).params()
        return Response(ReflectionOut(reflection_create(entry=entry)).data)


class ExcavationView(AgentView):
    """v2: interactive excavation. ``mode=init`` with the entry, ``mode=step`` with the signed
    state, the reply and the id of the probe being answered."""

    @extend_schema(
        request=EXCAVATION_BODY,
        responses={
            200: ExcavationOut,
            **_errors(
                {
                    409: "integrity_mismatch or state_complete.",
                    410: "answer_mismatch: expected_probe_id is not the open probe "
                    "(`expected` is).",
                    422: "guardrail: the entry or reply suggests a risk of harm; `detail` "
                    "gives crisis contacts.",
                    **RATE,
                }
            ),
        },
        tags=["agent"],
        operation_id="postExcavation",
    )
    def post(self, request: Request) -> Response:
        client = client_id(request)
        rate_guard(client_id=client)
        turn = excavation_request(request.data)
        if isinstance(turn, JournalEntry):
            response = excavation_start(entry=turn, client_id=client)
        else:
            response = excavation_step(turn, client_id=client)
        return Response(ExcavationOut(response).data)


class V2ReflectionView(AgentView):
    """v2: a Reflection focused on the crux a completed excavation confirmed."""

    @extend_schema(
        request=V2ReflectionInput,
        responses={
            200: ReflectionOut,
            **_errors({409: "integrity_mismatch or excavation_incomplete.", **RATE}),
        },
        tags=["agent"],
        operation_id="postV2Reflection",
    )
    def post(self, request: Request) -> Response:
        client = client_id(request)
        rate_guard(client_id=client)
        state = validated(V2ReflectionInput(data=request.data)).params()
        return Response(ReflectionOut(excavation_reflect(state, client_id=client)).data)
