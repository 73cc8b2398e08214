"""The drop-in reads: the graph a page at a time, a search, entities by name; each with the
caller's own pending items, marked pending."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from django.contrib.auth.models import User

from kg import selectors
from kg.models import Entity, Observation
from mcpserver.kgwrites import staged_origin
from mcpserver.registry import Call
from mcpserver.tools.memory_server.common import STAGED, find, visible
from thoughts import selectors as thought_selectors
from thoughts.api.read_inputs import SearchInput

Match = Callable[[str], bool]  # which of the caller's pending names a read shows


def _graph(user: User, entities: list[Entity], *, pending: Match | None = None) -> dict[str, Any]:
    """The reference server's shape for ``entities``: their observations, the relations among
    them, and the caller's own pending entities and relations whose names ``pending`` takes."""
    ids = [e.pk for e in entities]
    texts: dict[int, list[str]] = {pk: [] for pk in ids}
    rows = selectors.memories_visible_to(user, Observation).filter(entity_id__in=ids)
    for entity_id, name, description in rows.order_by("created_at", "id").values_list(
        "entity_id", "name", "description"
    ):
        texts[entity_id].append(description or name)
    edges = selectors.visible_edges(user).filter(source_id__in=ids, target_id__in=ids)
    graph = {
        "entities": [
            {"name": e.name, "entityType": e.entity_type, "observations": texts[e.pk]}
            for e in entities
        ],
        "relations": [
            {"from": e.source.name, "to": e.target.name, "relationType": e.rel_type}
            for e in edges.select_related("source", "target").order_by("id")
        ],
    }
    if pending is not None:
        _add_pending(user, graph, pending)
    _add_pending_observations(user, graph)
    return graph


def _add_pending_observations(user: User, graph: dict[str, Any]) -> None:
    """The caller's own observations still in the moderation queue, on the entities of
    ``graph`` they are of, under ``pendingObservations``: the reference's observations are
    bare strings, with no room to mark one pending."""
    by_name = {e["name"].lower(): e for e in graph["entities"]}
    if not by_name:
        return
    staged = selectors.pending_observations(origin=staged_origin(user), entity_names=by_name)
    for cand in staged:
        entity = by_name.get(cand.entity_name.lower())
        if entity is not None:  # the database's lower case may differ from Python's
            entity.setdefault("pendingObservations", []).append(cand.description or cand.name)


def _add_pending(user: User, graph: dict[str, Any], match: Match) -> None:
    """The caller's own candidates still in the moderation queue, marked pending."""
    entities, edges = selectors.candidate_querysets(status="pending")
    origin = staged_origin(user)
    for cand in entities.filter(origin=origin).order_by("created_at", "id"):
        if match(cand.name):
            graph["entities"].append(
                {"name": cand.name, "entityType": cand.entity_type, "observations": [],
                 "status": STAGED}
            )  # fmt: skip
    for edge in edges.filter(origin=origin).order_by("created_at", "id"):
        if match(edge.source_name) and match(edge.target_name):
            graph["relations"].append(
                {"from": edge.source_name, "to": edge.target_name,
                 "relationType": edge.rel_type, "status": STAGED}
            )  # fmt: skip


def _any(name: str) -> bool:
    return True


def read_graph(call: Call) -> dict[str, Any]:
    start, limit = call.data["cursor"], call.data["limit"]
    everything = visible(call.user).defer("embedding").order_by("name", "id")
    total = everything.count()
    page = list(everything[start : start + limit])
    graph = _graph(call.user, page, pending=_any if start == 0 else None)
    more = start + limit < total
    return {**graph, "nextCursor": start + limit if more else None, "total": total}


def search_nodes(call: Call) -> dict[str, Any]:
    form = SearchInput(data={"query": call.data["query"], "top_k_memories": call.data["limit"]})
    form.is_valid(raise_exception=True)
    found = thought_selectors.search(
        user=call.user,
        query=call.data["query"],
        target="mixed",
        include_thoughts=False,
        top_k_memories=call.data["limit"],
        top_k_thoughts=1,
        sim_thresh=0.0,
        filters=form.filters(),
        order=None,
    )
    entity_ids = [hit.id for hit in found.memories if hit.kind == "entity"]
    observed = [hit.id for hit in found.memories if hit.kind == "observation"]
    rows = selectors.memories_visible_to(call.user, Observation).filter(pk__in=observed)
    entity_ids += [pk for pk in rows.values_list("entity_id", flat=True) if pk is not None]
    order = {pk: i for i, pk in enumerate(dict.fromkeys(entity_ids))}
    entities = sorted(visible(call.user).filter(pk__in=order), key=lambda e: order[e.pk])
    # Pending items have no vector yet: they match by a word of the query in their name, or
    # (observations) in their text, which brings their entity along.
    words = {w for w in re.findall(r"\w+", call.data["query"].lower()) if len(w) >= 3}
    observed_names = _pending_observed(call.user, words, limit=call.data["limit"])
    for name in observed_names:
        entity = find(call.user, name)
        if entity is not None and entity.pk not in order:
            order[entity.pk] = len(order)
            entities.append(entity)

    def match(name: str) -> bool:
        return name.lower() in observed_names or any(w in name.lower() for w in words)

    return _graph(call.user, entities, pending=match)


def _pending_observed(user: User, words: set[str], *, limit: int) -> list[str]:
    """The names (lower case) of up to ``limit`` entities with an observation of the caller's
    still pending whose text holds one of ``words``."""
    staged = selectors.pending_observations(origin=staged_origin(user), words=words)
    names = (cand.entity_name.lower() for cand in staged if cand.entity_name)
    return list(dict.fromkeys(names))[:limit]


def open_nodes(call: Call) -> dict[str, Any]:
    entities = [e for name in call.data["names"] if (e := find(call.user, name)) is not None]
    names = {name.lower() for name in call.data["names"]}
    unique = list({e.pk: e for e in entities}.values())
    return _graph(call.user, unique, pending=lambda name: name.lower() in names)
