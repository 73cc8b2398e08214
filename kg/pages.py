"""Browser pages of the knowledge graph: semantic search and a list by type, and an entity with
its observations, edges, the thoughts it was drawn from (to their owner only) and its
neighbourhood drawn as a graph whose nodes open their entities.

The same selectors as the API (``kg_search``, ``memories_visible_to``, ``visible_edges``,
``entity_neighbors``): a memory drawn from someone else's private thought is a 404 here as
there, and a source thought is named only to its owner (``selectors.own_source_ids``)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Count, Q
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import path, reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from kg import selectors
from kg.api.permissions import MODERATE
from kg.models import Edge, Entity, Observation
from legacymind.errors import ServiceError
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
    lines = [Line(str(e.source_id), str(e.target_id), e.rel_type) for e in edges]
    return drawing(placed, lines, label=f"Entities around {focus.name}; each is a link", step=95)


def _node(ent: Entity, x: float, y: float, classes: str) -> Node:
    href = reverse("kg-entity-page", args=[ent.pk])
    return Node(str(ent.pk), ent.name, href, f"{ent.name} ({ent.entity_type})", classes, x, y)


urlpatterns = [
    path("kg/", explore, name="kg-page"),
    path("kg/entities/<int:entity_id>/", entity, name="kg-entity-page"),
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
