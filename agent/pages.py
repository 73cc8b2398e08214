"""Browser journaling pages: write an entry, answer the agent's questions, see the crux. The
page drives the same service as the API; the signed state rides in a hidden field, and internal
actions are continued server-side so the writer only sees questions."""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET, require_POST

from agent.services import agent_act
from legacymind.errors import ServiceError

MAX_INTERNAL = 12  # internal steps continued per page load; the step budget bounds it anyway


@login_required
@require_GET
def journal(request: HttpRequest) -> HttpResponse:
    return render(request, "agent/journal.html", {})


@login_required
@require_POST
def journal_act(request: HttpRequest) -> HttpResponse:
    # Rate and budget guards count per user, as the API does (agent.views.client_id).
    client = f"user:{request.user.pk}"
    try:
        if request.POST.get("state"):
            data: dict[str, Any] = {"mode": "continue", "state": json.loads(request.POST["state"])}
            answer_to = request.POST.get("answer_to")
            value = (request.POST.get("free_text") or "").strip() or request.POST.get("value")
            if answer_to:
                data["user_event"] = {"answer_to": answer_to, "value": value}
        else:
            data = {"mode": "init", "journal_entry": {"text": request.POST.get("entry", "")}}
        response = json.loads(agent_act(data=data, idempotency_key=None, client_id=client))
        for _ in range(MAX_INTERNAL):
            if response["complete"] or response["action"]["type"] == "AskUser":
                break
            response = json.loads(
                agent_act(
                    data={"mode": "continue", "state": response["state"]},
                    idempotency_key=None,
                    client_id=client,
                )
            )
    except (ServiceError, ValueError) as exc:
        detail = getattr(exc, "detail", str(exc))
        status = getattr(exc, "status_code", 400)
        context: dict[str, Any] = {"error": detail, "entry": request.POST.get("entry", "")}
        try:  # keep the open question on screen: a bad answer loses nothing
            state = json.loads(request.POST.get("state") or "null")
        except ValueError:
            state = None
        if (
            isinstance(state, dict)
            and isinstance(state.get("last_action"), dict)
            and state["last_action"].get("type") == "AskUser"
        ):
            context.update(
                response={"state": state}, state_json=json.dumps(state), action=state["last_action"]
            )
        return render(request, "agent/journal.html", context, status=status)
    return render(
        request,
        "agent/journal.html",
        {
            "response": response,
            "state_json": json.dumps(response["state"]),
            "action": response.get("action"),
            "result": response.get("result"),
        },
    )
