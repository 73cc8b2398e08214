"""Deciding an observation candidate: approve (an observation of its entity, which must exist
by then) or reject (its text on its entity is blocklisted). An observation is never aliased."""

from __future__ import annotations

from django.contrib.auth.models import User

from kg.identity import observation_key
from kg.models import Blocklist, Entity, ObservationCandidate
from kg.selectors.visibility import memories_visible_to
from kg.services.memories import observation_upsert
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
from legacymind.errors import ServiceError


def decide_observation(item: DecisionItem, reviewer: User | None) -> Decided:
    cand = pending_candidate(ObservationCandidate, item)
    if isinstance(cand, tuple):
        return cand
    if item.decision == "alias":
        raise DecisionError(
            f"observation candidate {item.id}: only entity candidates can be aliased"
        )
    if item.decision == "reject":
        return _observation_reject(cand, item, reviewer)
    return _observation_approve(cand, item, reviewer)


def _observation_reject(
    cand: ObservationCandidate, item: DecisionItem, reviewer: User | None
) -> Decided:
    """Reject the candidate and blocklist its text on its entity."""
    block(Blocklist.Kind.OBSERVATION, observation_key(cand.name, cand.entity_name), item, reviewer)
    reviewed(cand, item, reviewer)
    return "rejected; the observation is blocklisted", None, False


def _observation_entity(cand: ObservationCandidate, reviewer: User | None) -> Entity | None:
    """The entity the candidate is of, among those the moderator sees: the one it was staged
    against, else (staged with a pending entity, or that entity since deleted) the one its
    name names now."""
    among = memories_visible_to(viewer_of(reviewer), Entity)
    if cand.entity_id is not None:
        entity = among.filter(pk=cand.entity_id).first()
        if entity is not None:
            return entity
    return entity_find(name=cand.entity_name, among=among)


def _observation_approve(
    cand: ObservationCandidate, item: DecisionItem, reviewer: User | None
) -> Decided:
    """Promote the candidate to an observation (of its entity, which must exist by then)."""
    entity = _observation_entity(cand, reviewer) if cand.entity_name else None
    if cand.entity_name and entity is None:
        raise DecisionError(
            f"observation candidate {item.id}: entity {cand.entity_name!r} does not exist; "
            "approve or create it first",
            fields={"entity": cand.entity_name},
        )
    try:
        obs, created = observation_upsert(
            name=cand.name,
            description=cand.description,
            data=cand.data,
            entity_id=entity.pk if entity else None,
            source_thought_id=cand.staged_by_thought_id,
            confidence=cand.confidence,
            viewer=viewer_of(reviewer),
        )
    except ServiceError as exc:  # the name is taken by a memory the moderator cannot see
        raise DecisionError(f"observation candidate {item.id}: {exc.detail}") from None
    cand.promoted = obs
    reviewed(cand, item, reviewer)
    of = f" of {entity.name!r}" if entity else ""
    return f"{'created' if created else 'updated'} observation {obs.name!r}{of}", obs.pk, created
