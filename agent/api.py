"""The journaling agent over HTTP. Views validate the body with the pydantic contracts in
agent/schemas.py (drf-spectacular documents them through its pydantic extension), call one
service, sign a returned state for the client (agent.integrity) and render the JSON."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

import drf_spectacular.contrib.pydantic  # noqa: F401  (registers the pydantic schema extension)
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from prometheus_client import CONTENT_TYPE_LATEST
from pydantic import BaseModel, RootModel, TypeAdapter, ValidationError
from rest_framework import serializers
from rest_framework.authentication import TokenAuthentication
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agent import metrics
from agent.errors import AgentError, RateLimited
from agent.excavations import completed_result, excavation_start, excavation_step
from agent.integrity import sign
from agent.reflections import reflection_create
from agent.schemas import (
    AgentActRequest,
    AgentActResponse,
    ExcavationBody,
    ExcavationRequest,
    ExcavationResponse,
    Reflection,
    ReflectionRequest,
    V2ReflectionRequest,
)
from agent.services import agent_act, rate_guard
from legacymind.api.parsers import JSONParser
from legacymind.api.schema import ErrorOut
from legacymind.errors import ServiceError, envelope

M = TypeVar("M")


class AgentActBody(RootModel[AgentActRequest]):
    """Either an init request (journal entry) or a continue request (signed state + answer)."""


class ExcavationBodyDoc(RootModel[ExcavationBody]):
    """Either an init request (journal entry) or a step (signed state, reply, probe id)."""


_ACT_REQUEST: TypeAdapter[AgentActRequest] = TypeAdapter(AgentActRequest)


class AgentErrorOut(ErrorOut):
    """The project's error envelope, plus the data some agent errors carry for the client."""

    expected = serializers.CharField(
        required=False, help_text="answer_mismatch: the id of the open question or probe."
    )
    retry_after = serializers.IntegerField(
        required=False, help_text="rate_limited: seconds to wait (also the Retry-After header)."
    )
    guardrail = serializers.CharField(
        required=False, help_text="guardrail: the distress detector's level (risk)."
    )
    category = serializers.CharField(
        required=False,
        allow_null=True,
        help_text="guardrail: the warning-sign category (never the matched words).",
    )
    crisis_resources = serializers.ListField(
        child=serializers.DictField(child=serializers.CharField()),
        required=False,
        help_text="guardrail: crisis services to contact now (name, contact, region).",
    )


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
        request=AgentActBody,
        responses={200: AgentActResponse, **_errors(ERRORS)},
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
    def post(self, request: Request) -> HttpResponse:
        client = client_id(request)
        rate_guard(client_id=client)
        response = agent_act(
            act_request(request.data),
            idempotency_key=request.headers.get("Idempotency-Key"),
            client_id=client,
        )
        sign(response.state, client_id=client)
        return _json(response)


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


def act_request(data: Any) -> AgentActRequest:
    """A /v3/agent/act body (or the journal page's turn) as a typed request; a ServiceError
    naming each invalid field otherwise."""
    return _validated(_ACT_REQUEST.validate_python, data, tags=("init", "continue"))


def _validated(validate: Callable[[Any], M], data: Any, *, tags: tuple[str, ...] = ()) -> M:
    try:
        return validate(data)
    except ValidationError as exc:
        fields = pydantic_fields(exc, tags=tags)
        first = next(iter(fields.items()))
        raise ServiceError(f"Invalid input. {first[0]}: {first[1][0]}", fields=fields) from exc


def pydantic_fields(exc: ValidationError, *, tags: tuple[str, ...] = ()) -> dict[str, list[str]]:
    """Field path → messages. ``tags``: the discriminator values pydantic puts first in the
    location of a tagged union's errors; dropped so paths name fields of the request body."""
    fields: dict[str, list[str]] = {}
    for err in exc.errors():
        loc = list(err["loc"])
        if loc and loc[0] in tags:
            loc = loc[1:]
        key = ".".join(str(p) for p in loc)
        if not key:
            key = "mode" if err["type"].startswith("union_tag") else "non_field_errors"
        fields.setdefault(key, []).append(err["msg"])
    return fields


def _json(model: BaseModel) -> HttpResponse:
    return HttpResponse(model.model_dump_json(), content_type="application/json")


class ReflectionView(AgentView):
    """v1: one-shot Reflection from a journal entry."""

    @extend_schema(
        request=ReflectionRequest,
        responses={
            200: Reflection,
            **_errors({422: "guardrail: the entry suggests a risk of harm.", **RATE}),
        },
        tags=["agent"],
        operation_id="postReflection",
    )
    def post(self, request: Request) -> HttpResponse:
        rate_guard(client_id=client_id(request))
        body = _validated(ReflectionRequest.model_validate, request.data)
        return _json(reflection_create(entry=body.journal_entry))


class ExcavationView(AgentView):
    """v2: interactive excavation. ``mode=init`` with the entry, ``mode=step`` with the signed
    state, the reply and the id of the probe being answered."""

    @extend_schema(
        request=ExcavationBodyDoc,
        responses={
            200: ExcavationResponse,
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
    def post(self, request: Request) -> HttpResponse:
        rate_guard(client_id=client_id(request))
        body = _validated(ExcavationRequest.model_validate, request.data)
        if body.mode == "init":
            if body.journal_entry is None:
                raise ServiceError(
                    "journal_entry is required for mode=init.",
                    fields={"journal_entry": ["This field is required for mode=init."]},
                )
            return _json(excavation_start(entry=body.journal_entry, client_id=client_id(request)))
        state, reply, probe_id = body.state, body.user_reply, body.expected_probe_id
        if state is None or reply is None or probe_id is None:
            missing = [
                name
                for name, value in (
                    ("state", state),
                    ("user_reply", reply),
                    ("expected_probe_id", probe_id),
                )
                if value is None
            ]
            raise ServiceError(
                f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} required for "
                "mode=step.",
                fields={name: ["This field is required for mode=step."] for name in missing},
            )
        return _json(
            excavation_step(
                state=state,
                user_reply=reply,
                expected_probe_id=probe_id,
                client_id=client_id(request),
            )
        )


class V2ReflectionView(AgentView):
    """v2: a Reflection focused on the crux a completed excavation confirmed."""

    @extend_schema(
        request=V2ReflectionRequest,
        responses={
            200: Reflection,
            **_errors({409: "integrity_mismatch or excavation_incomplete.", **RATE}),
        },
        tags=["agent"],
        operation_id="postV2Reflection",
    )
    def post(self, request: Request) -> HttpResponse:
        rate_guard(client_id=client_id(request))
        body = _validated(V2ReflectionRequest.model_validate, request.data)
        result = completed_result(state=body.state, client_id=client_id(request))
        return _json(
            reflection_create(entry=body.state.journal_entry, focus=result.confirmed_crux.text)
        )
