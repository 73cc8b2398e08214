"""Browser pages of the knowledge graph: semantic search and a list by type, an entity with
its observations, edges, the thoughts it was drawn from (to their owner only) and its
neighbourhood drawn as a graph whose nodes open their entities, and for moderators the review
queue, each candidate beside the sentence it was drawn from.

The same selectors as the API (``kg_search``, ``memories_visible_to``, ``visible_edges``,
``entity_neighbors``): a memory drawn from someone else's private thought is a 404 here as
there, and a source thought is named only to its owner (``selectors.own_source_ids``)."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db.models import Count, Q
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, QueryDict
from django.shortcuts import render
from django.urls import path, reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from kg import selectors, services
from kg.api.moderation import KgDecisionItem, decision_items
from kg.api.permissions import MODERATE
from kg.models import Edge, EdgeCandidate, Entity, EntityCandidate, Observation
from legacymind.errors import ServiceError
from legacymind.templatetags.lm_words import words
from legacymind.users import signed_in
from legacymind.web.graph import Drawing, Node, drawing, ring
from legacymind.web.graph import Edge as Line

PER_PAGE = 30
SEARCH_TOP_K = 20
QUERY_MAX = 2000
SEARCH_DOWN = "Search is not answering right now (the embedding service did not respond)."


@never_cache
@login_required
@require_GET
def explore(request: HttpRequest) -> HttpResponse:
    q = request.GET.get("q", "").strip()[:QUERY_MAX]
    kind = request.GET.get("type", "").strip()[:64]
    visible = selectors.memories_visible_to(request.user, Entity).defer("embedding")
    types = visible.values("entity_type").annotate(n=Count("id")).order_by("-n", "entity_type")
    context: dict[str, Any] = {
        "q": q,
        "kind": kind,
        "types": list(types),
        "moderator": request.user.has_perm(MODERATE),
        "query_max": QUERY_MAX,
    }
    if q:
        try:
            context["hits"] = selectors.kg_search(query=q, viewer=request.user, top_k=SEARCH_TOP_K)
        except ServiceError:
            context["error"] = SEARCH_DOWN
    else:
        rows = visible.filter(entity_type__iexact=kind) if kind else visible
        page = Paginator(rows.order_by("name", "id"), PER_PAGE).get_page(request.GET.get("page"))
        context.update(page=page, keep=f"type={kind}&" if kind else "")
    return render(request, "kg/explore.html", context)


@never_cache
@login_required
@require_GET
def entity(request: HttpRequest, entity_id: int) -> HttpResponse:
    viewer = request.user
    try:
        focus = selectors.memories_visible_to(viewer, Entity).defer("embedding").get(pk=entity_id)
    except Entity.DoesNotExist as exc:
        raise Http404("No such entity.") from exc
    depth = 2 if request.GET.get("depth") == "2" else 1
    observations = list(
        selectors.memories_visible_to(viewer, Observation)
        .filter(entity=focus)
        .defer("embedding")
        .order_by("-confidence", "name")
    )
    edges = list(
        selectors.visible_edges(viewer)
        .filter(Q(source=focus) | Q(target=focus))
        .order_by("rel_type", "id")
    )
    nodes, around = selectors.entity_neighbors(entity=focus, viewer=viewer, depth=depth)
    own = selectors.own_source_ids(viewer, focus, *observations, *edges)
    context = {
        "entity": focus,
        "observations": observations,
        "edges": edges,
        "sources": _named_sources(own, focus, *observations, *edges),
        "depth": depth,
        "graph": neighbourhood_drawing(focus, nodes, around),
        "moderator": viewer.has_perm(MODERATE),
    }
    return render(request, "kg/entity.html", context)


def neighbourhood_drawing(focus: Entity, nodes: list[Entity], edges: list[Edge]) -> Drawing:
    """The entity in the middle, its direct neighbours on a ring around it, the second hop on
    an outer ring."""
    first = {e.source_id for e in edges if e.target_id == focus.pk}
    first |= {e.target_id for e in edges if e.source_id == focus.pk}
    inner = [n for n in nodes if n.pk in first]
    outer = [n for n in nodes if n.pk not in first]
    radius_in, radius_out = (1.6, 3.0) if outer else (1.6, 0.0)
    centre = radius_out or radius_in
    placed = [_node(focus, centre, centre, "focus")]
    for ents, radius, offset in ((inner, radius_in, 0.0), (outer, radius_out, 0.3)):
        for ent, (x, y) in zip(ents, ring(len(ents), radius, offset=offset), strict=True):
            placed.append(_node(ent, centre + x, centre + y, ""))
    lines = [Line(str(e.source_id), str(e.target_id), words(e.rel_type)) for e in edges]
    return drawing(placed, lines, label=f"Entities around {focus.name}; each is a link", step=95)


def _node(ent: Entity, x: float, y: float, classes: str) -> Node:
    href = reverse("kg-entity-page", args=[ent.pk])
    return Node(str(ent.pk), ent.name, href, f"{ent.name} ({ent.entity_type})", classes, x, y)


REVIEW_PER_PAGE = 20
# The queue's kinds as the API's ``target`` names them, with the words the page uses.
REVIEW_KINDS = {
    "mixed": "all",
    "entity": "entities",
    "relationship": "connections",
    "observation": "observations",
}
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]*")


def _moderator(request: HttpRequest) -> None:
    if not request.user.has_perm(MODERATE):
        raise PermissionDenied("Only knowledge-graph moderators review candidates.")


@never_cache
@login_required
@require_GET
def review(request: HttpRequest) -> HttpResponse:
    """The pending candidates, newest first, as the API's ``GET /api/v1/kg/candidates/``
    (``candidate_queue``), a page at a time; entities with the likely canonical entities an
    alias may name (``suggestions_for``, as ``suggest=true``)."""
    _moderator(request)
    kind = request.GET.get("kind", "mixed")
    kind = kind if kind in REVIEW_KINDS else "mixed"
    queue = selectors.candidate_queue(target=kind, status="pending")
    # The queue pages as the API's paginator reads it: count() and a slice.
    pages: Paginator[selectors.AnyCandidate] = Paginator(queue, REVIEW_PER_PAGE)  # type: ignore[arg-type]
    page = pages.get_page(request.GET.get("page"))
    rows: list[selectors.AnyCandidate] = list(page)
    entities = [c for c in rows if isinstance(c, EntityCandidate)]
    suggested = selectors.suggestions_for(entities, viewer=request.user) if entities else {}
    candidates = [
        {
            "row": c,
            "kind": selectors.candidate_kind(c),
            "evidence": _evidence(c, request.user.pk),
            "suggestions": suggested.get(c.pk, []) if isinstance(c, EntityCandidate) else [],
        }
        for c in rows
    ]
    context = {
        "page": page,
        "candidates": candidates,
        "kind": kind,
        "kinds": REVIEW_KINDS,
        "kind_label": REVIEW_KINDS[kind],
        "keep": f"kind={kind}&",
    }
    return render(request, "kg/review.html", context)


@never_cache
@login_required
@require_POST
def review_decide(request: HttpRequest) -> HttpResponse:
    """One decision, read by the API's own item (``KgDecisionItem``) and applied by the service
    ``POST /api/v1/kg/candidates/decide`` calls (``candidates_decide``); back to the queue."""
    _moderator(request)
    fields = ("id", "kind", "decision", "note", "canonical_id")
    # A form's text, read as the API reads a query string (QueryDict): "12" is the id 12.
    data = QueryDict(mutable=True)
    for f in fields:
        if request.POST.get(f, "").strip():
            data[f] = request.POST[f]
    if data.get("decision") != "alias":
        data.pop("canonical_id", None)  # the alias box may hold a choice another button ignores
    item = KgDecisionItem(data=data)
    if not item.is_valid():
        wrong = (
            "an alias needs the id of the entity it names"
            if "canonical_id" in item.errors
            else "choose approve, reject or alias"
        )
        messages.error(request, f"Nothing was decided: {wrong}.")
    else:
        (outcome,) = services.candidates_decide(
            items=decision_items([item.validated_data]), reviewer=signed_in(request)
        )
        (messages.success if outcome.ok else messages.error)(request, outcome.detail)
    # Back to the queue as it was shown: its kind and page, never an address from the form.
    queue = request.POST.get("queue", "")
    back = {"kind": queue if queue in REVIEW_KINDS else "mixed"}
    if request.POST.get("page", "").isdigit():
        back["page"] = request.POST["page"]
    return HttpResponseRedirect(f"{reverse('kg-review-page')}?{urlencode(back)}")


def _evidence(cand: selectors.AnyCandidate, viewer_id: int | None) -> dict[str, Any]:
    """The sentence the candidate was drawn from, split around the name it concerns so the page
    can mark it: an edge's own evidence, else the sentence of its source thought that names it.
    The words of someone else's private thought stay with its owner (``hidden``)."""
    thought = cand.staged_by_thought
    if thought is not None and thought.is_private and thought.owner_id != viewer_id:
        return {"hidden": True}
    if isinstance(cand, EdgeCandidate):
        names = [cand.source_name, cand.target_name]
    elif isinstance(cand, EntityCandidate):
        names = [cand.name]
    else:
        names = [cand.entity_name, cand.name]
    names = [n for n in names if n.strip()]
    texts = [cand.evidence] if isinstance(cand, EdgeCandidate) and cand.evidence else []
    texts += [thought.content] if thought is not None else []
    for text in texts:
        for match in _SENTENCE.finditer(text):
            sentence = " ".join(match.group().split())
            for name in names:
                at = sentence.lower().find(name.lower())
                if at >= 0:
                    end = at + len(name)
                    return {"before": sentence[:at], "name": sentence[at:end],
                            "after": sentence[end:]}  # fmt: skip
    # No sentence names it as written (an edge's evidence in other words, a name the extractor
    # normalised): the evidence, or the start of the thought, unmarked.
    if texts and texts[0].strip():
        return {"before": " ".join(texts[0].split())[:400], "name": "", "after": ""}
    return {}


urlpatterns = [
    path("kg/", explore, name="kg-page"),
    path("kg/entities/<int:entity_id>/", entity, name="kg-entity-page"),
    path("kg/review/", review, name="kg-review-page"),
    path("kg/review/decide", review_decide, name="kg-review-decide"),
]


def _named_sources(own: set[Any], *rows: Any) -> list[tuple[Any, str]]:
    """The viewer's own source thoughts (``own``, from ``own_source_ids``) with their first
    words, through the rows' own foreign keys: a thought is named only once it is known to be
    the viewer's."""
    named: dict[Any, str] = {}
    for row in rows:
        thought_id = getattr(row, "source_thought_id", None)
        if thought_id in own and thought_id not in named:
            named[thought_id] = " ".join(row.source_thought.content.split())
    return sorted(named.items(), key=lambda item: str(item[0]))
