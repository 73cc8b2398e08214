"""Browser journaling pages: write an entry, answer the agent's questions, see the crux. The
page drives the same service as the API (agent.services.journal_turn, which continues internal
actions server-side so the writer only sees questions); the signed state rides in a hidden
field.

With script the question form is sent by htmx and only the changing region
(``agent/_journal.html``) comes back, marked with ``X-Journal-Region`` so the page swaps it even
with a 4xx status; without script every turn is a plain POST answered with the whole page.

The API's error messages are written for programmers; the page says the same things in plain
sentences, and when the page's state can no longer go on (the Back button, a second tab) it
offers the entry again rather than the same dead question."""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from agent.api.inputs import act_request
from agent.api.views import client_id
from agent.engine.compose import FRAMES
from agent.errors import GuardrailTriggered
from agent.integrity import sign
from agent.reflections import reflection_create
from agent.safety import CONCERN_FLAG, Assessment, notice
from agent.schemas import MAX_ENTRY, MAX_REPLY, AgentActResponse, JournalEntry
from agent.services import journal_turn, rate_guard
from legacymind.errors import ServiceError, outage
from legacymind.web.form_tokens import is_token, new_token

# The API's own limits: the page refuses nothing the API would take, and its fields say so.
LIMITS = {"entry_max": MAX_ENTRY, "answer_max": MAX_REPLY}

WRITE_FIRST = "Write something first."
ANSWER_FIRST = "Choose an option or type an answer."
UNREADABLE = "This page's conversation could not be read. Your entry is below: start again."
STALE = (
    "This question was already answered, perhaps from another tab or after going back. "
    "Your entry is below: start again from it."
)
# Errors after which this page's state cannot be continued: the entry is offered again.
RESTART = {
    "stale_revision": STALE,
    "answer_mismatch": STALE,
    # The same question form (its token) sent again with another answer: a second tab, an
    # old copy of the page. The same answer replays what the first send got instead.
    "idempotency_key_reused": STALE,
    "state_complete": "This conversation has already finished. Your entry is below: start again.",
    "budget_exhausted": "This conversation used all its questions. Your entry is below.",
    "integrity_mismatch": "This page's conversation could not be checked. Start again below.",
}
# Errors after which the same question can simply be answered again.
RETRY = {
    "answer_required": ANSWER_FIRST,
    "revision_in_progress": "Your answer is still being worked on: wait a moment, then retry.",
    "rate_limited": "That was a lot of answers in a minute: wait a little, then try again.",
}
# Words the result page shows for each way the loop ends.
STOPPED = {
    "threshold": "the agent was confident enough to stop asking",
    "epsilon": "more questions would have told it little more",
    "budget": "it reached its question limit",
    "guardrail": "it paused for your safety",
}


class PageError(Exception):
    def __init__(self, message: str, *, restart: bool = False, status: int = 400) -> None:
        super().__init__(message)
        self.message, self.restart, self.status = message, restart, status


@never_cache
@login_required
@require_GET
def journal(request: HttpRequest) -> HttpResponse:
    return _page(request, {})


@never_cache  # a page restored by Back would resend a state that was already continued
@login_required
@require_POST
def journal_act(request: HttpRequest) -> HttpResponse:
    state = _posted_state(request)
    try:
        response = _run(request, state)
    except PageError as exc:
        return _error_page(request, exc, state)
    shown = response.model_dump(mode="json")
    result = shown["result"] or {}
    return _turn_page(
        request,
        {
            "response": shown,
            "state_json": json.dumps(shown["state"]),
            "action": shown["action"],
            "result": result,
            "belief": belief_chart(shown["state"]),
            "stopped": STOPPED.get(result.get("exit_reason", ""), ""),
            "ask_to_go_on": _asks_to_go_on(shown, state),
        },
    )


def _asks_to_go_on(shown: dict[str, Any], state: dict[str, Any] | str | None) -> bool:
    """At a concern the resources come first and the writer chooses to go on, once: a concern
    the answered state already carried (signed, so the service verified it) was shown on an
    earlier turn and the writer went on from it, so later turns show the resources calmly
    above the question without asking again. A risk stops the loop whatever came before."""
    if (shown.get("safety") or {}).get("level") != "concern":
        return False
    earlier = state.get("exit_flags") if isinstance(state, dict) else None
    return not (isinstance(earlier, dict) and earlier.get(CONCERN_FLAG))


@never_cache
@login_required
@require_POST
def journal_reflect(request: HttpRequest) -> HttpResponse:
    """v1: the four perspectives and the prophecy for the entry, through the API's service
    (``POST /reflections``); nothing is stored."""
    entry = request.POST.get("entry", "")
    if not entry.strip():
        return _page(request, {"error": WRITE_FIRST}, status=400)
    if len(entry) > MAX_ENTRY:
        message = f"Your entry is too long: keep it under {MAX_ENTRY:,} characters."
        return _page(request, {"error": message, "entry": entry}, status=400)
    try:
        rate_guard(client_id=client_id(request))
        reflection = reflection_create(entry=JournalEntry(text=entry))
    except GuardrailTriggered:
        crisis = notice(Assessment("risk", None)).model_dump()
        return _page(request, {"reflect_crisis": crisis, "entry": entry})
    except ServiceError as exc:
        return _error_page(request, _plain(exc), None)
    shown = reflection.model_dump(mode="json")
    return _page(request, {"reflection": shown, "entry": entry, "safety": shown["safety"]})


def belief_chart(state: dict[str, Any]) -> list[dict[str, Any]]:
    """The agent's belief over its candidate cruxes (the active ones), most believed first: the
    bars the page draws after each turn."""
    belief = state.get("belief_state") or {}
    probs = belief.get("probs") or {}
    # Spoken to the writer, as the options and the crux are; a node spawned from an answer
    # ("open") has only its own text.
    bars = [
        {
            "text": FRAMES.get(node.get("archetype", ""), node["text"]),
            "p": float(probs.get(node["node_id"], 0.0)),
        }
        for node in belief.get("nodes") or []
        if node.get("status") == "active"
    ]
    bars.sort(key=lambda bar: -bar["p"])
    for bar in bars:
        bar["percent"] = round(bar["p"] * 100)
    return bars


def _posted_state(request: HttpRequest) -> dict[str, Any] | str | None:
    """The state the page sent back: a dict, None on the entry form, or the raw text when it
    is not a JSON object (the run refuses it)."""
    raw = request.POST.get("state") or ""
    if not raw:
        return None
    try:
        state = json.loads(raw)
    except ValueError:
        return raw
    return state if isinstance(state, dict) else raw


def _run(request: HttpRequest, state: dict[str, Any] | str | None) -> AgentActResponse:
    """The writer's turn and the internal steps after it; the new state signed for them."""
    # The API's client id: the guards count, and the state is signed, for the same user.
    client = client_id(request)
    data = _turn_data(request, state)
    token = request.POST.get("turn_token", "")
    try:
        response = journal_turn(
            act_request(data), client_id=client, form_token=token if is_token(token) else None
        )
    except ServiceError as exc:
        raise _plain(exc) from exc
    except Exception as exc:
        # The cache (Redis) holds the rate guard and the idempotency store: down, the step is
        # not run, and the page says so with the entry or question kept, as the API's 503.
        detail = outage(exc, path=request.path)
        if detail is None:
            raise
        raise PageError(detail, status=503) from exc
    sign(response.state, client_id=client)
    return response


def _turn_data(request: HttpRequest, state: dict[str, Any] | str | None) -> dict[str, Any]:
    """The turn the form asks for, as a /v3/agent/act body: the entry, or the state with the
    answer to its question; plain words for what the writer can put right."""
    if isinstance(state, str):
        raise PageError(UNREADABLE, restart=True)
    if state is None:
        entry = request.POST.get("entry", "")
        if not entry.strip():
            raise PageError(WRITE_FIRST)
        if len(entry) > MAX_ENTRY:
            raise PageError(f"Your entry is too long: keep it under {MAX_ENTRY:,} characters.")
        return {"mode": "init", "journal_entry": {"text": entry}}
    data: dict[str, Any] = {"mode": "continue", "state": state}
    answer_to = request.POST.get("answer_to")
    if answer_to:
        # An option button names its own value; Send (and Enter in the box) sends the text.
        value = request.POST.get("value") or (request.POST.get("free_text") or "").strip()
        if not value.strip():
            raise PageError(ANSWER_FIRST)
        if len(value) > MAX_REPLY:
            raise PageError(f"Keep your answer under {MAX_REPLY:,} characters.")
        data["user_event"] = {"answer_to": answer_to, "value": value}
    return data


def _plain(exc: ServiceError) -> PageError:
    """The page's sentence for an error the service raised (its own detail stays in the API)."""
    if exc.error_code in RESTART:
        return PageError(RESTART[exc.error_code], restart=True, status=exc.status_code)
    if exc.error_code in RETRY:
        return PageError(RETRY[exc.error_code], status=exc.status_code)
    if exc.error_code == "invalid":  # the entry is checked above: it is the state that is bad
        return PageError(UNREADABLE, restart=True)
    return PageError("Something went wrong with that step: try again in a moment.",
                     status=exc.status_code)  # fmt: skip


def _error_page(
    request: HttpRequest, exc: PageError, state: dict[str, Any] | str | None
) -> HttpResponse:
    context: dict[str, Any] = {"error": exc.message, "entry": request.POST.get("entry", "")}
    if isinstance(state, dict):
        journal_entry = state.get("journal_entry")
        if isinstance(journal_entry, dict) and isinstance(journal_entry.get("text"), str):
            context["entry"] = journal_entry["text"]
        last = state.get("last_action")
        if not exc.restart and isinstance(last, dict) and last.get("type") == "AskUser":
            # Keep the open question on screen: a bad answer loses nothing.
            context.update(response={"state": state}, state_json=json.dumps(state), action=last)
    return _turn_page(request, context, status=exc.status)


def _page(
    request: HttpRequest,
    context: dict[str, Any],
    *,
    status: int = 200,
    template: str = "agent/journal.html",
) -> HttpResponse:
    context = {**LIMITS, "turn_token": new_token(), **context}
    return render(request, template, context, status=status)


def _turn_page(request: HttpRequest, context: dict[str, Any], *, status: int = 200) -> HttpResponse:
    """A turn's answer: the whole page for a plain POST; for htmx only the region it swaps."""
    if request.headers.get("HX-Request") != "true":
        return _page(request, context, status=status)
    response = _page(request, context, status=status, template="agent/_journal.html")
    response["X-Journal-Region"] = "1"
    return response
