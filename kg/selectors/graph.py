"""Reads of the graph itself: the edges a user may see, an entity's neighbourhood."""

from __future__ import annotations

from django.db.models import Q, QuerySet

from kg.models import Edge, Entity
from kg.selectors.visibility import memories_visible_to
from legacymind.users import Viewer


def visible_edges(viewer: Viewer) -> QuerySet[Edge]:
    """Edges ``viewer`` may see: the edge and both of its endpoints pass the memory rule (an
    edge between two shared entities can still come from someone's private thought)."""
    entities = memories_visible_to(viewer, Entity).values("pk")
    return (
        memories_visible_to(viewer, Edge)
        .filter(source_id__in=entities, target_id__in=entities)
        .select_related("source", "target")
    )


def entity_neighbors(
    *, entity: Entity, viewer: Viewer, depth: int = 1
) -> tuple[list[Entity], list[Edge]]:
    """Entities within ``depth`` hops (either direction) and the edges between them, as far as
    ``viewer`` may see them."""
    seen = {entity.pk}
    frontier = {entity.pk}
    edges: dict[int, Edge] = {}
    for _ in range(depth):
        hop = visible_edges(viewer).filter(Q(source_id__in=frontier) | Q(target_id__in=frontier))
        nxt: set[int] = set()
        for edge in hop:
            edges[edge.pk] = edge
            nxt |= {edge.source_id, edge.target_id}
        frontier = nxt - seen
        seen |= nxt
        if not frontier:
            break
    nodes = list(
        memories_visible_to(viewer, Entity).filter(id__in=seen - {entity.pk}).order_by("name")
    )
    return nodes, list(edges.values())
