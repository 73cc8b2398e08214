"""``legacymind_search``: KG memories and thoughts nearest to a query, with the list filters."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from kg.selectors import MemoryHit, memories_nearest
from legacymind.errors import ServiceError
from legacymind.providers.embeddings import Provenance, get_provider, provenance
from legacymind.users import Viewer
from legacymind.vectors.search import exact_similarity, nearest_or_exact
from thoughts.selectors.reads import ThoughtFilters, thoughts_filter
from thoughts.selectors.visibility import thoughts_visible_to

SEARCH_TARGETS = ("entity", "observation", "mixed", "thoughts")
SEARCH_ORDERS = ("similarity", "created_at_asc", "created_at_desc")


@dataclass(frozen=True)
class Hit:
    kind: str  # thought
    row: Any
    similarity: float


@dataclass(frozen=True)
class SearchResult:
    memories: list[MemoryHit]
    thoughts: list[Hit] | None  # None when thoughts were not searched
    order: str | None
    embedding: Provenance


def _nearest_above(
    queryset: QuerySet[Any], vector: list[float], model: str, k: int, min_similarity: float
) -> list[Any]:
    rows = nearest_or_exact(queryset, vector, model, k)
    return [row for row in rows if row.similarity >= min_similarity]


def _memory_hits(
    *,
    user: Viewer,
    vector: list[float],
    model: str,
    target: str,
    k: int,
    sim_thresh: float,
    chain_id: str | None,
) -> list[MemoryHit]:
    kinds = ("entity", "observation") if target == "mixed" else (target,)
    # With a chain: memories drawn from the viewer's thoughts of that chain.
    chain = thoughts_visible_to(user).filter(chain_id=chain_id) if chain_id is not None else None
    found = memories_nearest(
        user, vector, model=model, k=k, kinds=kinds, min_similarity=sim_thresh, from_thoughts=chain
    )
    return found.hits[:k]


def _thought_hits(
    *,
    user: Viewer,
    vector: list[float],
    model: str,
    k: int,
    sim_thresh: float,
    filters: ThoughtFilters,
    order: str,
) -> list[Hit]:
    queryset = thoughts_filter(thoughts_visible_to(user).defer("embedding"), filters)
    if order == "similarity":
        rows = _nearest_above(queryset, vector, model, k, sim_thresh)
    else:
        by = ("created_at", "id") if order == "created_at_asc" else ("-created_at", "-id")
        above = exact_similarity(queryset, vector, model).filter(distance__lte=1 - sim_thresh)
        rows = list(above.order_by(*by)[:k])
    return [Hit("thought", row, float(row.similarity)) for row in rows]


def search(
    *,
    user: Viewer,
    query: str,
    target: str = "mixed",
    include_thoughts: bool = False,
    top_k_memories: int = 10,
    top_k_thoughts: int = 5,
    sim_thresh: float = 0.0,
    filters: ThoughtFilters | None = None,
    order: str | None = None,
) -> SearchResult:
    """``legacymind_search``: KG memories (shared, less those drawn from other users' private
    thoughts) and optionally the viewer's thoughts nearest to ``query``, at or above
    ``sim_thresh``, among rows embedded by the current model (vectors of another model, even of
    the same dimension, are not comparable; ``manage.py reembed`` brings them over).

    Memories are ranked by similarity, entities and observations merged. Thoughts follow
    ``order``; without one, a session or chain filter lists them oldest first (reading a line of
    reasoning), anything else by similarity. The continuity, origin, confidence and date filters
    select thoughts; ``chain_id`` also limits memories to those drawn from that chain.
    """
    if target not in SEARCH_TARGETS:
        raise ServiceError("Unknown search target.", fields={"target": [target]})
    filters = filters or ThoughtFilters()
    provider = get_provider()
    vector = [float(x) for x in provider.embed([query])[0]]
    memories: list[MemoryHit] = []
    if target != "thoughts":
        memories = _memory_hits(
            user=user,
            vector=vector,
            model=provider.model,
            target=target,
            k=top_k_memories,
            sim_thresh=sim_thresh,
            chain_id=filters.chain_id,
        )
    thoughts: list[Hit] | None = None
    if include_thoughts or target == "thoughts":
        continuity = filters.session_id is not None or filters.chain_id is not None
        order = order or ("created_at_asc" if continuity else "similarity")
        thoughts = _thought_hits(
            user=user,
            vector=vector,
            model=provider.model,
            k=top_k_thoughts,
            sim_thresh=sim_thresh,
            filters=filters,
            order=order,
        )
    return SearchResult(
        memories, thoughts, order if thoughts is not None else None, provenance(provider)
    )
