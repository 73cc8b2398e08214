"""Deciding an edge candidate: approve (an edge between the entities its names resolve to) or
reject (its relation is blocklisted). An edge is never aliased."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db.models import QuerySet

from kg.identity import edge_key
from kg.models import Blocklist, Edge, EdgeCandidate, Entity
from kg.selectors.visibility import memories_visible_to
from kg.services.moderation.base import (
    Decided,
    DecisionError,
    DecisionItem,
    block,
    entity_find,
    pending_candidate,
    reviewed,
    viewer_of,
)


def decide_edge(item: DecisionItem, reviewer: User | None) -> Decided:
    cand = pending_candidate(EdgeCandidate, item)
    if isinstance(cand, tuple):
        return cand
    if item.decision == "alias":
        raise DecisionError(f"edge candidate {item.id}: only entity candidates can be aliased")
    if item.decision == "reject":
        return _edge_reject(cand, item, reviewer)
    return _edge_approve(cand, item, reviewer)


def _edge_reject(cand: EdgeCandidate, item: DecisionItem, reviewer: User | None) -> Decided:
    """Reject the candidate and blocklist its relation."""
    block(
        Blocklist.Kind.EDGE, edge_key(cand.source_name, cand.target_name, cand.rel_type),
        item, reviewer,
    )  # fmt: skip
    reviewed(cand, item, reviewer)
    return "rejected; the relation is blocklisted", None, False


def _edge_approve(cand: EdgeCandidate, item: DecisionItem, reviewer: User | None) -> Decided:
    """Promote the candidate to an edge between the entities its names resolve to."""
    source, target = _edge_ends(cand, item, reviewer)
    edge, created = Edge.objects.get_or_create(
        source=source,
        target=target,
        rel_type=cand.rel_type,
        defaults={"confidence": cand.confidence, "source_thought_id": cand.staged_by_thought_id},
    )
    cand.promoted = edge
    reviewed(cand, item, reviewer)
    what = f"{source.name} -[{edge.rel_type}]-> {target.name}"
    if created:
        return f"created edge {what}", edge.pk, True
    return f"reused edge {edge.pk} {what}", edge.pk, False


def _edge_ends(
    cand: EdgeCandidate, item: DecisionItem, reviewer: User | None
) -> tuple[Entity, Entity]:
    """The source and target entities the candidate's names resolve to: both must exist, and
    differ."""
    ends = {}
    among = _endpoints_for(cand, reviewer)
    for role, name in (("source", cand.source_name), ("target", cand.target_name)):
        entity = entity_find(name=name, among=among)
        if entity is None:
            raise DecisionError(
                f"edge candidate {item.id}: {role} entity {name!r} does not exist; "
                "approve or create it first",
                fields={role: name},
            )
        ends[role] = entity
    if ends["source"].pk == ends["target"].pk:
        raise DecisionError(
            f"edge candidate {item.id}: source and target are the same entity "
            f"{ends['source'].name!r}; reject it"
        )
    return ends["source"], ends["target"]


def _endpoints_for(cand: EdgeCandidate, reviewer: User | None) -> QuerySet[Entity]:
    """The entities an edge candidate's names may resolve to: those the moderator sees, and
    those drawn from thoughts of the candidate's own author (their private memories are the
    ones their private thought speaks of). Anyone else's private memories read as missing."""
    among = memories_visible_to(viewer_of(reviewer), Entity)
    if cand.staged_by_thought is not None:
        author = cand.staged_by_thought.owner_id
        among = among | Entity.objects.filter(source_thought__owner_id=author)
    return among
