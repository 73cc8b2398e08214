"""Browser pages of your thoughts: the timeline (filters, paging, semantic search), one thought
with its memories, verification and chain, and its delete.

Thin doors onto the API's own paths: the filters are the list endpoint's input
(``ThoughtFilterInput``), the search is ``legacymind_search`` (``selectors.search``, as
``POST /api/v1/search``), the reads and the delete are the same selectors and service. Another
user's thought is a 404, as in the API."""

from __future__ import annotations

import uuid
from contextlib import suppress
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import path, reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from legacymind.errors import NotFound, ServiceError
from legacymind.users import signed_in
from legacymind.web.graph import Drawing, Edge, Node, drawing
from thoughts import selectors, services
from thoughts.api.read_inputs import ThoughtFilterInput
from thoughts.models import Thought
from thoughts.selectors import Chain, ChainNode
from thoughts.think.modes import MODE_DEFAULTS

PER_PAGE = 20
SEARCH_TOP_K = 20
QUERY_MAX = 2000
FILTER_NAMES = (
    "session_id", "chain_id", "origin", "mode", "tags", "date_from", "date_to",
    "confidence_gte", "confidence_lte",
)  # fmt: skip
FILTER_LABELS = {
    "session_id": "Session", "chain_id": "Chain", "origin": "Origin", "mode": "Mode",
    "tags": "Tags", "date_from": "From", "date_to": "To",
    "confidence_gte": "Confidence at least", "confidence_lte": "Confidence at most",
}  # fmt: skip
CHAIN_DEPTH = 10
# The journal's entry limit (agent.schemas.MAX_ENTRY): thoughts do not import the agent.
JOURNAL_MAX = 20_000
BAD_FILTER = "That filter cannot be used as it is: {detail}"
SEARCH_DOWN = "Search is not answering right now (the embedding service did not respond)."


@never_cache
@login_required
@require_GET
def timeline(request: HttpRequest) -> HttpResponse:
    form = {name: request.GET.get(name, "").strip() for name in (*FILTER_NAMES, "q")}
    context: dict[str, Any] = {
        "form": form,
        "modes": sorted(MODE_DEFAULTS),
        "origins": Thought.Origin.choices,
        "query_max": QUERY_MAX,
    }
    filters = _filters(form, context)
    if filters is not None:
        q = form["q"][:QUERY_MAX]
        context.update(_searched(request, q, filters) if q else _listed(request, filters))
    # htmx asks for the results alone when a filter changes or a page is turned.
    name = "thoughts/_results.html" if request.headers.get("HX-Request") else "thoughts/list.html"
    return render(request, name, context, status=400 if context.get("error") else 200)


def _filters(form: dict[str, str], context: dict[str, Any]) -> selectors.ThoughtFilters | None:
    """The list endpoint's own input rules; a bad value is a sentence on the page."""
    data = {name: form[name] for name in FILTER_NAMES if form[name]}
    checked = ThoughtFilterInput(data=data)
    if checked.is_valid():
        return checked.filters()
    # Each message beside its field, and all of them in the sentence above the results, named
    # by the labels the form shows rather than the query's parameter names.
    context["field_errors"] = {
        name: " ".join(str(e) for e in errors) for name, errors in checked.errors.items()
    }
    detail = "; ".join(
        f"{FILTER_LABELS.get(name, name)}: {message}"
        for name, message in context["field_errors"].items()
    )
    context["error"] = BAD_FILTER.format(detail=detail)
    return None


def _listed(request: HttpRequest, filters: selectors.ThoughtFilters) -> dict[str, Any]:
    rows = selectors.thoughts_list(user=request.user, filters=filters)
    page = Paginator(rows, PER_PAGE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    return {"page": page, "rows": list(page), "keep": query.urlencode()}


def _searched(request: HttpRequest, q: str, filters: selectors.ThoughtFilters) -> dict[str, Any]:
    try:
        result = selectors.search(
            user=request.user,
            query=q,
            target="thoughts",
            top_k_thoughts=SEARCH_TOP_K,
            filters=filters,
            order="similarity",
        )
    except ServiceError:
        return {"error": SEARCH_DOWN, "rows": []}
    # Each row carries its ``similarity`` from the search itself.
    return {"rows": [hit.row for hit in result.thoughts or []], "searched": True}


@never_cache
@login_required
@require_GET
def detail(request: HttpRequest, thought_id: uuid.UUID) -> HttpResponse:
    thought = _own(request, thought_id)
    links = selectors.thought_links(user=request.user, thought=thought)
    chain = selectors.thought_chain(user=request.user, thought=thought, depth=CHAIN_DEPTH)
    graph = chain_drawing(chain, links)
    # A linked thought is named by its first words where the chain drew it, else by its id.
    named = {node.key: node.label for node in graph.nodes if node.href}
    context = {
        "thought": thought,
        "mode_reason": selectors.mode_reason(thought),
        "links": links,
        "link_rows": [
            (name.removesuffix("_thought").replace("_", " "), link, named.get(str(link.id), ""))
            for name, link in links.items()
            if link is not None
        ],
        "injected": selectors.injected_memories(user=request.user, thought=thought),
        "verification": thought.verification or None,
        "chain": chain,
        "graph": graph,
    }
    return render(request, "thoughts/detail.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def delete(request: HttpRequest, thought_id: uuid.UUID) -> HttpResponse:
    """GET asks to confirm; POST deletes through the API's own service."""
    thought = _own(request, thought_id)
    if request.method == "GET":
        return render(request, "thoughts/delete.html", {"thought": thought})
    with suppress(NotFound):  # deleted meanwhile (another tab): gone is what was asked for
        services.thought_delete(user=signed_in(request), thought_id=thought.pk)
    messages.success(request, "The thought was deleted.")
    return HttpResponseRedirect(reverse("thoughts-page"))


@login_required
@require_POST
def save_journal(request: HttpRequest) -> HttpResponse:
    """The journal's opt-in "save": the entry as a private thought, through the one write. The
    journal stores nothing on its own; this is the writer's explicit choice."""
    entry = request.POST.get("entry", "").replace("\r\n", "\n")
    if not entry.strip() or len(entry) > JOURNAL_MAX:
        return HttpResponseRedirect(reverse("journal"))
    try:
        thought = services.thought_create(
            owner=signed_in(request),
            content=entry,
            origin=Thought.Origin.JOURNAL,
            is_private=True,
            tags=["journal"],
        )
    except ServiceError:
        messages.error(request, "The entry could not be saved just now: try again in a moment.")
        return HttpResponseRedirect(reverse("journal"))
    messages.success(request, "Your entry is saved as a private thought.")
    return HttpResponseRedirect(reverse("thought-page", args=[thought.pk]))


def _own(request: HttpRequest, thought_id: uuid.UUID) -> Thought:
    try:
        return selectors.thought_get(user=request.user, thought_id=thought_id)
    except NotFound as exc:
        raise Http404("No such thought.") from exc


# --- the chain as a picture -------------------------------------------------------------------
def chain_drawing(chain: Chain, links: dict[str, selectors.Link | None]) -> Drawing:
    """The chain tree laid out left to right (a level per column, a branch per row); the
    focus thought's links that do not resolve drawn dashed, without a link."""
    nodes: list[Node] = []
    edges: list[Edge] = []
    _place(chain.root, 0, [0], nodes, edges)
    focus = next(node for node in nodes if "focus" in node.classes)
    for name, link in links.items():
        if link is not None and link.status == "string":
            key = f"unresolved-{name}"
            label = f"{name.replace('_', ' ')} (not found)"
            title = f"{label}: {link.id}"
            nodes.append(Node(key, label, None, title, "unresolved", focus.x - 1, focus.y + 1))
            edges.append(Edge(key, focus.key, name.replace("_thought", ""), "unresolved"))
    return drawing(nodes, edges, label="The thought's chain; each thought is a link", step=150)


def _place(
    node: ChainNode, column: int, row: list[int], nodes: list[Node], edges: list[Edge]
) -> None:
    thought = node.thought
    preview: str = getattr(thought, "preview", "") or ""
    # The circle is named by the thought's first words (what one recognises in a chain); the
    # tooltip and screen readers get its time, mode and a longer preview.
    when = f"{thought.created_at:%b %d %H:%M} · {thought.mode or thought.origin or 'thought'}"
    label = " ".join(preview.split()) or when
    classes = " ".join(c for c in ("focus" if node.is_focus else "", node.relation) if c)
    href = reverse("thought-page", args=[thought.pk])
    nodes.append(
        Node(str(thought.pk), label, href, f"{when}: {preview[:120]}", classes, column, row[0])
    )
    children = [*node.successors, *node.revisions, *node.branches]
    for i, child in enumerate(children):
        if i:
            row[0] += 1
        edges.append(Edge(str(thought.pk), str(child.thought.pk), child.relation))
        _place(child, column + 1, row, nodes, edges)


urlpatterns = [
    path("thoughts/", timeline, name="thoughts-page"),
    path("thoughts/<uuid:thought_id>/", detail, name="thought-page"),
    path("thoughts/<uuid:thought_id>/delete", delete, name="thought-page-delete"),
    path("thoughts/save-journal", save_journal, name="thoughts-page-save-journal"),
]
