"""Browser pages of the inner voice: ask a question, read and search your dialogue threads.

The pages drive the same service and selectors as the API. An ask is a POST that redirects to
the thread (post/redirect/get), so reloading the answer never asks again. The question is
never stored, as in the API: on an error it is only sent back in the form, so nothing typed is
lost."""

from __future__ import annotations

import logging
import uuid
from contextlib import suppress
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.paginator import Page, Paginator
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import path, reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from agent.safety import Assessment, notice
from innervoice import compose, selectors, submissions
from innervoice.api import QUERY_MAX, InnerVoiceInput
from innervoice.models import DialogueThread
from innervoice.services import AskParams, inner_voice_ask
from innervoice.threads import thread_close
from kg.selectors import memories_by_id
from legacymind.api.throttles import UserThrottle
from legacymind.errors import Conflict, NotFound, ServiceError, outage, redis_down
from legacymind.users import signed_in
from legacymind.web.form_tokens import new_token
from thoughts.selectors import thoughts_visible_to

logger = logging.getLogger("innervoice")

TOPIC_MAX = 255  # DialogueThread.topic
SEARCH_MAX = 500  # as the API's threads filter
THREADS_PER_PAGE = 20
EXCHANGES_PER_PAGE = 20

ASK_FIRST = "Write a question first."
TOO_LONG = f"Your question is too long: keep it under {QUERY_MAX:,} characters."
TOPIC_TOO_LONG = f"Keep the new thread's topic under {TOPIC_MAX} characters."
NUL = "Your question or topic holds a null character, which cannot be stored: remove it."
TOO_MANY = "You have asked too often for now: wait a moment and ask again."
STILL_RUNNING = (
    "This question was sent twice and is still being answered: its answer will be in your "
    "threads in a moment."
)
UNAVAILABLE = "A service this page needs is not answering: nothing was stored, try again soon."
# What the page says for an error the service raised; its own detail is the API's business.
PLAIN = {
    404: "That thread was deleted. Nothing was stored; your question is below: ask it here, "
    "or give a topic to start a new thread.",
    409: "That thread is closed. Your question is below: ask it here to go on in your open "
    "thread, or give a topic to start a new one.",
    503: "Your question could not be read right now (the embedding service did not answer). "
    "Nothing was stored: try again in a moment.",
}


class PageError(Exception):
    def __init__(self, message: str, *, status: int = 400) -> None:
        super().__init__(message)
        self.message, self.status = message, status


@never_cache
@login_required
@require_GET
def home(request: HttpRequest) -> HttpResponse:
    return _home(request, {})


@never_cache
@login_required
@require_GET
def thread(request: HttpRequest, thread_id: uuid.UUID) -> HttpResponse:
    return _thread(request, _own_thread(request, thread_id), {})


@never_cache
@login_required
@require_POST
def ask(request: HttpRequest) -> HttpResponse:
    form = {
        "query": request.POST.get("query", ""),
        "topic": request.POST.get("topic", ""),
        "include_private": request.POST.get("include_private") == "on",
    }
    raw_thread = request.POST.get("thread_id", "")
    continued = _own_thread(request, raw_thread) if raw_thread else None
    try:
        params = _params(form, continued)
        once = _claim(request)
        if isinstance(once, str):  # the same form sent again: the first post's answer
            return HttpResponseRedirect(once)
        try:
            # The API's per-user rate (API_THROTTLE_USER) holds here too: an ask costs model
            # calls whichever way it comes in.
            _within_rate(request)
            result = inner_voice_ask(owner=signed_in(request), params=params)
        except BaseException:
            once.release()  # nothing was stored: the same form may be sent again
            raise
    except PageError as exc:
        return _form_again(request, continued, form, exc)
    except ServiceError as exc:
        if exc.public_detail is not None:  # the operator's business, as the API logs it
            logger.warning("%s: %s", exc.error_code, exc.detail)
        message = PLAIN.get(exc.status_code, "That did not work: try again in a moment.")
        if isinstance(exc, Conflict | NotFound):
            # The thread closed (by hand, elsewhere, or timed out) or was deleted: its page
            # would have no form, so the question goes back in the main page's.
            continued = None
        return _form_again(request, continued, form, PageError(message, status=exc.status_code))
    url = reverse("inner-voice-page-thread", args=[result.thread.id])
    # The question is not kept anywhere, so its safety level travels in the address (a level,
    # never words): the thread page shows the resources beside the answer.
    safety = f"&safety={result.safety.level}" if result.safety.level != "none" else ""
    answer = f"{url}?asked={result.position}{safety}#exchange-{result.position}"
    once.done(answer)
    return HttpResponseRedirect(answer)


def _claim(request: HttpRequest) -> submissions.Claim | str:
    """This post's claim on its form's token, or the answer of an earlier post of that form."""
    token = request.POST.get(submissions.FIELD, "")
    try:
        return submissions.claim(user_id=request.user.pk, token=token)
    except submissions.StillRunning as exc:
        raise PageError(STILL_RUNNING, status=409) from exc
    except Exception as exc:
        if outage(exc, path=request.path) is None:  # logged when it is one
            raise
        raise PageError(UNAVAILABLE, status=503) from exc


@login_required
@require_POST
def close(request: HttpRequest, thread_id: uuid.UUID) -> HttpResponse:
    own = _own_thread(request, thread_id)
    if own.status == DialogueThread.Status.OPEN:
        # A second click, or another tab, may close it first: closed is what was asked for.
        with suppress(Conflict, NotFound):  # closed, or deleted: the thread page says which
            thread_close(thread=own)
    return HttpResponseRedirect(reverse("inner-voice-page-thread", args=[own.id]))


def _params(form: dict[str, Any], continued: DialogueThread | None) -> AskParams:
    """The API's own input rules (``InnerVoiceInput``), worded for the page."""
    # Browsers send a textarea's line breaks as CRLF: counted as the user sees them.
    query, topic = form["query"].replace("\r\n", "\n"), form["topic"].strip()
    if not query.strip():
        raise PageError(ASK_FIRST)
    data: dict[str, Any] = {"query": query, "include_private": form["include_private"]}
    if continued is not None:
        data["thread_id"] = continued.id
    elif topic:
        data["new_thread"] = topic
    checked = InnerVoiceInput(data=data)
    if not checked.is_valid():
        codes = {
            (name, getattr(error, "code", None))
            for name, errors in checked.errors.items()
            for error in errors
        }
        if ("query", "max_length") in codes:
            raise PageError(TOO_LONG)
        if ("new_thread", "max_length") in codes:
            raise PageError(TOPIC_TOO_LONG)
        if any(code == "null_characters_not_allowed" for _, code in codes):
            raise PageError(NUL)
        raise PageError("That question cannot be asked as it is: check it and try again.")
    return checked.params()


def _within_rate(request: HttpRequest) -> None:
    """``API_THROTTLE_USER``'s rate, which the cache counts: a cache (Redis) that is down is
    a 503 in the form, the question kept, as the API answers it."""
    try:
        allowed = UserThrottle().allow_request(request, None)  # type: ignore[arg-type]
    except Exception as exc:
        if not redis_down(exc):
            raise
        outage(exc, path=request.path)  # the operator's WARNING line, as the API logs it
        raise PageError(UNAVAILABLE, status=503) from exc
    if not allowed:
        raise PageError(TOO_MANY, status=429)


def _own_thread(request: HttpRequest, thread_id: uuid.UUID | str) -> DialogueThread:
    # Another user's thread reads like one that does not exist, as in the API.
    try:
        return selectors.thread_get(user=signed_in(request), thread_id=thread_id)
    except NotFound as exc:
        raise Http404("No such thread.") from exc


def _form_again(
    request: HttpRequest, continued: DialogueThread | None, form: dict[str, Any], exc: PageError
) -> HttpResponse:
    context = {"error": exc.message, "form": form}
    if continued is not None:
        return _thread(request, continued, context, status=exc.status)
    return _home(request, context, status=exc.status)


def _home(request: HttpRequest, context: dict[str, Any], *, status: int = 200) -> HttpResponse:
    q = request.GET.get("q", "").strip()[:SEARCH_MAX]
    threads = selectors.threads_list(user=signed_in(request), q=q)
    page = Paginator(threads, THREADS_PER_PAGE).get_page(request.GET.get("page"))
    context = {
        "q": q,
        "threads": page,
        "query_max": QUERY_MAX,
        "topic_max": TOPIC_MAX,
        "ask_token": new_token(),
        **context,
    }
    return render(request, "innervoice/home.html", context, status=status)


def _thread(
    request: HttpRequest, own: DialogueThread, context: dict[str, Any], *, status: int = 200
) -> HttpResponse:
    # Newest first: the answer just asked for is at the top of the first page.
    exchanges = selectors.thread_exchanges(thread=own).reverse()
    page: Page[Any] = Paginator(exchanges, EXCHANGES_PER_PAGE).get_page(request.GET.get("page"))
    rows = list(page)  # the page's own rows: the template iterates the same
    _add_sources(request, rows)
    for x in rows:
        # The answer reads as prose; its sources are the links below it, not ids in the text.
        x.answer_blocks, x.answered_by = answer_display(
            compose.answer_shown(x.synthesis_thought.content)
        )
    context = {
        "thread": own,
        "exchanges": page,
        # Its own token: "Ask this next" is a second ask form on the page.
        "next_token": new_token(),
        "asked": request.GET.get("asked", ""),
        "safety": _safety(request.GET.get("safety", "")),
        "query_max": QUERY_MAX,
        "ask_token": new_token(),
        **context,
    }
    return render(request, "innervoice/thread.html", context, status=status)


# Which provider answered, said beside the answer rather than in it (the stored text keeps it).
OFFLINE_NOTE = f" ({compose.OFFLINE_PROVIDER}):"
ANSWERED_OFFLINE = "offline composer"
BULLETS = ("- ", "* ", "• ")


def answer_display(text: str) -> tuple[list[tuple[str, Any]], str]:
    """An answer's text as the page shows it: paragraphs and, where its lines are a list
    ("- ..."), a list; and who answered, when the text says so (the offline composer's header
    names itself), for the exchange's muted meta line rather than the answer's words."""
    answered_by = ""
    head, newline, rest = text.partition("\n")
    if head == compose.OFFLINE_HEADER:
        head = head.removesuffix(OFFLINE_NOTE) + ":"
        answered_by = ANSWERED_OFFLINE
    blocks: list[tuple[str, Any]] = []
    for line in f"{head}{newline}{rest}".splitlines():
        item = line.strip()
        bullet = next((b for b in BULLETS if item.startswith(b)), None)
        if bullet is not None:
            if not blocks or blocks[-1][0] != "list":
                blocks.append(("list", []))
            blocks[-1][1].append(item.removeprefix(bullet).strip())
        elif not item:
            blocks.append(("break", ""))
        elif blocks and blocks[-1][0] == "text":
            blocks[-1] = ("text", f"{blocks[-1][1]}\n{line}")
        else:
            blocks.append(("text", line))
    return [b for b in blocks if b[0] != "break"], answered_by


KINDS = {"kge": "entity", "kgo": "observation"}  # the KG's refs (kge:12) as kinds


def _add_sources(request: HttpRequest, exchanges: list[Any]) -> None:
    """Sets each exchange's ``source_links``: the thoughts and KG memories its answer was drawn
    from, as links to their pages, as far as the viewer may still see them (a query or two a
    page, not one an exchange). A thought is named by its first sentence; an earlier offline
    answer by what it found, not by the header every such answer opens with."""
    thought_ids = {t for x in exchanges for t in x.thoughts_provided or []}
    refs = {x.pk: [_ref(r) for r in x.memories_injected or []] for x in exchanges}
    wanted = {
        kind: {pk for rs in refs.values() for k, pk in rs if k == kind and pk is not None}
        for kind in KINDS.values()
    }
    rows = memories_by_id(
        request.user, entity_ids=wanted["entity"], observation_ids=wanted["observation"]
    )
    visible = thoughts_visible_to(request.user).filter(pk__in=_uuids(thought_ids))
    previews = {str(pk): text for pk, text in visible.values_list("pk", "content")}
    for x in exchanges:
        links = [
            {
                "ref": f"thoughts:{t}",
                "label": _short(compose.summary_sentence(previews[t])),
                "href": reverse("thought-page", args=[t]),
            }
            for t in x.thoughts_provided or []
            if t in previews
        ]
        for ref, (kind, pk) in zip(x.memories_injected or [], refs[x.pk], strict=True):
            row = rows.get((kind, pk)) if kind and pk is not None else None
            entity_id = pk if kind == "entity" else getattr(row, "entity_id", None)
            if row is not None and entity_id is not None:
                href = reverse("kg-entity-page", args=[entity_id])
                links.append({"ref": str(ref), "label": row.name, "href": href})
        # In the order the answer drew on them, as its stored Sources line cites them.
        cited = _cited(x.synthesis_thought.content)
        links.sort(key=lambda link: cited.get(link["ref"], len(cited)))
        x.source_links = links


def _cited(content: str) -> dict[str, int]:
    """The refs of a synthesis thought's Sources line (spec 000), each with its place."""
    last = content.rstrip().rpartition("\n")[2]
    if not last.startswith("Sources:"):
        return {}
    refs = [r.strip() for r in last.removeprefix("Sources:").split(",")]
    return {ref: n for n, ref in enumerate(refs) if ref}


def _ref(ref: str) -> tuple[str | None, int | None]:
    prefix, _, raw = str(ref).partition(":")
    kind = KINDS.get(prefix)
    return (kind, int(raw)) if kind and raw.isdigit() else (None, None)


def _uuids(values: set[str]) -> list[uuid.UUID]:
    out = []
    for value in values:
        with suppress(ValueError):
            out.append(uuid.UUID(value))
    return out


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _safety(level: str) -> dict[str, Any] | None:
    """The notice for the level the ask left in the address (anything else shows none)."""
    if level not in ("concern", "risk"):
        return None
    return notice(Assessment(level, None)).model_dump()


urlpatterns = [
    path("inner-voice/", home, name="inner-voice-page"),
    path("inner-voice/ask", ask, name="inner-voice-page-ask"),
    path("inner-voice/threads/<uuid:thread_id>/", thread, name="inner-voice-page-thread"),
    path("inner-voice/threads/<uuid:thread_id>/close", close, name="inner-voice-page-close"),
]
