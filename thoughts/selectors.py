"""Reads of thoughts: who may see which, list filters, a thought's links and memories, its chain.

Visibility is one rule, applied by every read here: a user sees their own thoughts and nobody
else's. Private thoughts are therefore never shown to anyone but their owner, and a thought of
another user reads exactly like one that does not exist (the API answers 404, not 403).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.exceptions import ValidationError
from django.db.models import Case, F, FloatField, Q, QuerySet, When
from django.db.models.functions import Cast, Left
from pgvector.django import CosineDistance, VectorField

from kg.models import Entity, Observation
from legacymind.errors import NotFound, ServiceError
from legacymind.providers.embeddings import Provenance, get_provider, provenance
from legacymind.vectors import nearest
from thoughts.models import Thought

LINK_FIELDS = ("previous_thought", "revises_thought", "branch_from")
CHAIN_MAX_DEPTH = 50
CHAIN_MAX_NODES = 500
CHAIN_PREVIEW_CHARS = 280

Viewer = AbstractBaseUser | AnonymousUser
M = TypeVar("M", Entity, Observation)


def thoughts_visible_to(user: Viewer) -> QuerySet[Thought]:
    """The thoughts ``user`` may read: their own, private or not."""
    if not user.is_authenticated:
        return Thought.objects.none()
    return Thought.objects.filter(owner_id=user.pk)


def memories_visible_to(user: Viewer, model: type[M]) -> QuerySet[M]:
    """KG entities or observations ``user`` may see. The graph is shared, but a memory drawn
    from someone's private thought stays theirs (the think pipeline injects by the same rule)."""
    shared = Q(source_thought__isnull=True) | Q(source_thought__is_private=False)
    if user.is_authenticated:
        shared |= Q(source_thought__owner_id=user.pk)
    return model._default_manager.filter(shared)


@dataclass(frozen=True)
class ThoughtFilters:
    """The filters of the thought list and of search (``legacymind_search``'s names).

    ``created_gte`` / ``created_lte`` are inclusive bounds; the API turns a date into its whole
    day. Confidence bounds only match thoughts that have a confidence.
    """

    session_id: str | None = None
    chain_id: str | None = None
    previous_thought_id: uuid.UUID | None = None
    revises_thought: uuid.UUID | None = None
    branch_from: uuid.UUID | None = None
    origin: str | None = None
    mode: str | None = None
    tags: tuple[str, ...] = ()
    tags_match: str = "any"
    created_gte: datetime | None = None
    created_lte: datetime | None = None
    confidence_gte: float | None = None
    confidence_lte: float | None = None


def thoughts_filter(queryset: QuerySet[Thought], filters: ThoughtFilters) -> QuerySet[Thought]:
    f = filters
    exact = {
        "session_id": f.session_id,
        "chain_id": f.chain_id,
        "previous_thought_id": f.previous_thought_id,
        "revises_thought_id": f.revises_thought,
        "branch_from_id": f.branch_from,
        "origin": f.origin,
        "mode": f.mode,
        "created_at__gte": f.created_gte,
        "created_at__lte": f.created_lte,
        "confidence__gte": f.confidence_gte,
        "confidence__lte": f.confidence_lte,
    }
    queryset = queryset.filter(**{k: v for k, v in exact.items() if v is not None})
    if f.tags:
        lookup = "tags__contains" if f.tags_match == "all" else "tags__overlap"
        queryset = queryset.filter(**{lookup: list(f.tags)})
    return queryset


def thoughts_list(*, user: Viewer, filters: ThoughtFilters) -> QuerySet[Thought]:
    """The user's thoughts, newest first, without the vectors a list never shows."""
    visible = thoughts_visible_to(user).defer("embedding")
    return thoughts_filter(visible, filters).order_by("-created_at", "-id")


def thought_get(*, user: Viewer, thought_id: uuid.UUID | str) -> Thought:
    try:
        return thoughts_visible_to(user).defer("embedding").get(pk=thought_id)
    except (Thought.DoesNotExist, ValueError, ValidationError) as exc:  # a malformed id too
        raise NotFound("No such thought.") from exc


# --- continuity links and injected memories of one thought ----------------------------------
@dataclass(frozen=True)
class Link:
    id: uuid.UUID
    # "record": a thought this viewer can open. "string": kept but unresolved, because no such
    # thought exists yet, or because it is someone else's (which must read the same).
    status: str


def thought_links(*, user: Viewer, thought: Thought) -> dict[str, Link | None]:
    ids = {name: getattr(thought, f"{name}_id") for name in LINK_FIELDS}
    wanted = {value for value in ids.values() if value is not None}
    found = set(thoughts_visible_to(user).filter(pk__in=wanted).values_list("pk", flat=True))
    return {
        name: None if value is None else Link(value, "record" if value in found else "string")
        for name, value in ids.items()
    }


_KIND_ALIASES = {
    "entity": "entity",
    "kge": "entity",
    "kg_entities": "entity",
    "observation": "observation",
    "kgo": "observation",
    "kg_observations": "observation",
}


def _memory_ref(item: Any) -> tuple[str | None, int | None, dict[str, Any]]:
    """(kind, id, extra) of one stored injected memory: ``{"id", "kind", ...}`` or the
    original's string ids (``kg_entities:12``, ``kge:12``)."""
    extra: dict[str, Any] = {}
    if isinstance(item, dict):
        extra = {k: v for k, v in item.items() if k not in ("id", "kind")}
        raw_kind, raw_id = item.get("kind"), item.get("id")
    elif isinstance(item, str) and ":" in item:
        raw_kind, raw_id = item.split(":", 1)
    else:
        return None, None, extra
    kind = _KIND_ALIASES.get(str(raw_kind))
    if isinstance(raw_id, str) and ":" in raw_id:  # {"id": "kge:12"}
        prefix, raw_id = raw_id.split(":", 1)
        kind = kind or _KIND_ALIASES.get(prefix)
    try:
        return kind, int(str(raw_id)), extra
    except ValueError:
        return kind, None, extra


@dataclass(frozen=True)
class InjectedMemory:
    kind: str | None
    id: int | None
    row: Entity | Observation | None  # None: deleted since, or not visible to this viewer
    extra: dict[str, Any] = field(default_factory=dict)


def injected_memories(*, user: Viewer, thought: Thought) -> list[InjectedMemory]:
    """The memories injected into ``thought``, in stored order, joined to their current rows."""
    refs = [_memory_ref(item) for item in thought.injected_memories or []]
    wanted: dict[str, set[int]] = {"entity": set(), "observation": set()}
    for kind, pk, _ in refs:
        if kind in wanted and pk is not None:
            wanted[kind].add(pk)
    rows: dict[tuple[str, int], Entity | Observation] = {}
    for e in memories_visible_to(user, Entity).filter(pk__in=wanted["entity"]).defer("embedding"):
        rows["entity", e.pk] = e
    observations = memories_visible_to(user, Observation).filter(pk__in=wanted["observation"])
    for o in observations.defer("embedding"):
        rows["observation", o.pk] = o
    return [
        InjectedMemory(kind, pk, rows.get((kind, pk)) if kind and pk else None, extra)
        for kind, pk, extra in refs
    ]


# --- the chain as a tree ----------------------------------------------------------------------
@dataclass
class ChainNode:
    thought: Thought
    relation: str  # root | successor | revision | branch
    is_focus: bool = False
    successors: list[ChainNode] = field(default_factory=list)
    revisions: list[ChainNode] = field(default_factory=list)
    branches: list[ChainNode] = field(default_factory=list)


@dataclass(frozen=True)
class Chain:
    root: ChainNode
    focus_id: uuid.UUID
    ancestors: int  # levels above the focus
    truncated: bool  # the depth or node limit cut something off


# A thought hangs under the first link it has, in this order: a successor under its
# predecessor, a revision under what it revises, a branch under its branching point.
_RELATIONS = (
    ("previous_thought_id", "successor", "successors"),
    ("revises_thought_id", "revision", "revisions"),
    ("branch_from_id", "branch", "branches"),
)


_CHAIN_FIELDS = [
    "id",
    "created_at",
    "mode",
    "origin",
    "is_private",
    "confidence",
    "session_id",
    "chain_id",
]


def _chain_rows(user: Viewer) -> QuerySet[Thought]:
    # A tree of hundreds of thoughts must not load their full text or vectors.
    return (
        thoughts_visible_to(user)
        .annotate(preview=Left("content", CHAIN_PREVIEW_CHARS + 1))
        .only(*_CHAIN_FIELDS, *(name for name, _, _ in _RELATIONS))
        .order_by("created_at", "id")
    )


def _visible_parent(rows: QuerySet[Thought], row: Thought) -> Thought | None:
    """The first of ``row``'s links, in ``_RELATIONS`` order, that the viewer can see."""
    ids = [getattr(row, name) for name, _, _ in _RELATIONS if getattr(row, name) is not None]
    if not ids:
        return None
    found = {parent.pk: parent for parent in rows.filter(pk__in=ids)}
    return next((found[pk] for pk in ids if pk in found), None)


def _links_into(frontier: dict[uuid.UUID, ChainNode]) -> Q:
    query = Q()
    for name, _, _ in _RELATIONS:
        query |= Q(**{f"{name}__in": list(frontier)})
    return query


def thought_chain(*, user: Viewer, thought: Thought, depth: int = 10) -> Chain:
    """The tree around ``thought``: up to ``depth`` ancestors, and below the topmost one every
    successor, revision and branch down to ``depth`` levels under the focus. Only the viewer's
    thoughts appear: a link to anything else is where the walk ends. A thought with several
    links appears once, under the nearest. At most ``CHAIN_MAX_NODES`` nodes."""
    depth = max(1, min(depth, CHAIN_MAX_DEPTH))
    rows = _chain_rows(user)
    focus = rows.get(pk=thought.pk)
    top, seen, truncated, ancestors = focus, {focus.pk}, False, 0
    while (parent := _visible_parent(rows, top)) is not None and parent.pk not in seen:
        if ancestors == depth:
            truncated = True
            break
        top, ancestors = parent, ancestors + 1
        seen.add(parent.pk)

    root = ChainNode(top, "root", is_focus=top.pk == focus.pk)
    frontier = {root.thought.pk: root}
    seen = {top.pk}
    for _ in range(ancestors + depth):
        nxt: dict[uuid.UUID, ChainNode] = {}
        full = False
        for row in rows.filter(_links_into(frontier)).exclude(pk__in=seen):
            if full := len(seen) >= CHAIN_MAX_NODES:
                break
            for name, relation, bucket in _RELATIONS:
                parent_node = frontier.get(getattr(row, name))
                if parent_node is not None:
                    node = ChainNode(row, relation, is_focus=row.pk == focus.pk)
                    getattr(parent_node, bucket).append(node)
                    nxt[row.pk] = node
                    seen.add(row.pk)
                    break
        if full:
            truncated = True
            break
        if not nxt:
            break
        frontier = nxt
    else:
        below = rows.filter(_links_into(frontier)).exclude(pk__in=seen)
        truncated = truncated or below.exists()
    return Chain(root=root, focus_id=focus.pk, ancestors=ancestors, truncated=truncated)


# --- search (legacymind_search) -------------------------------------------------------------
SEARCH_TARGETS = ("entity", "observation", "mixed", "thoughts")
SEARCH_ORDERS = ("similarity", "created_at_asc", "created_at_desc")


@dataclass(frozen=True)
class Hit:
    kind: str  # entity | observation | thought
    row: Any
    similarity: float


@dataclass(frozen=True)
class SearchResult:
    memories: list[Hit]
    thoughts: list[Hit] | None  # None when thoughts were not searched
    order: str | None
    embedding: Provenance


def _exact(queryset: QuerySet[Any], vector: list[float]) -> QuerySet[Any]:
    """Rows of the query's dimension with ``distance``/``similarity``, computed exactly.

    The CASE keeps Postgres from casting a vector of another size (it may evaluate a WHERE on
    the distance before the one on ``embedding_dim``) and, not being the indexed expression,
    keeps the HNSW index out of it.
    """
    dim = len(vector)
    cosine = CosineDistance(Cast("embedding", VectorField(dimensions=dim)), vector)
    distance = Case(When(embedding_dim=dim, then=cosine), default=None, output_field=FloatField())
    return (
        queryset.filter(embedding_dim=dim, embedding__isnull=False)
        .annotate(distance=distance)
        .annotate(similarity=1 - F("distance"))
    )


def _nearest_above(
    queryset: QuerySet[Any], vector: list[float], k: int, min_similarity: float
) -> list[Any]:
    rows = list(nearest(queryset, vector, k))
    if len(rows) < k:
        # pgvector 0.6 reads at most hnsw.ef_search index entries and filters them afterwards,
        # so a filtered search (one user's thoughts, one chain) can come back short although
        # more rows match: those rows are then few enough to rank exactly.
        rows = list(_exact(queryset, vector).order_by("distance")[:k])
    return [row for row in rows if row.similarity >= min_similarity]


def _memory_hits(
    *,
    user: Viewer,
    vector: list[float],
    target: str,
    k: int,
    sim_thresh: float,
    chain_id: str | None,
) -> list[Hit]:
    sources: list[tuple[str, QuerySet[Any]]] = []
    if target in ("entity", "mixed"):
        sources.append(("entity", memories_visible_to(user, Entity)))
    if target in ("observation", "mixed"):
        sources.append(("observation", memories_visible_to(user, Observation)))
    hits: list[Hit] = []
    for kind, queryset in sources:
        if chain_id is not None:  # memories drawn from the viewer's thoughts of that chain
            chain = thoughts_visible_to(user).filter(chain_id=chain_id)
            queryset = queryset.filter(source_thought__in=chain)
        for row in _nearest_above(queryset.defer("embedding"), vector, k, sim_thresh):
            hits.append(Hit(kind, row, float(row.similarity)))
    hits.sort(key=lambda hit: -hit.similarity)
    return hits[:k]


def _thought_hits(
    *,
    user: Viewer,
    vector: list[float],
    k: int,
    sim_thresh: float,
    filters: ThoughtFilters,
    order: str,
) -> list[Hit]:
    queryset = thoughts_filter(thoughts_visible_to(user).defer("embedding"), filters)
    if order == "similarity":
        rows = _nearest_above(queryset, vector, k, sim_thresh)
    else:
        by = ("created_at", "id") if order == "created_at_asc" else ("-created_at", "-id")
        above = _exact(queryset, vector).filter(distance__lte=1 - sim_thresh)
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
    ``sim_thresh``, among rows embedded by a model of the same dimension.

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
    memories: list[Hit] = []
    if target != "thoughts":
        memories = _memory_hits(
            user=user,
            vector=vector,
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
            k=top_k_thoughts,
            sim_thresh=sim_thresh,
            filters=filters,
            order=order,
        )
    return SearchResult(
        memories, thoughts, order if thoughts is not None else None, provenance(provider)
    )
