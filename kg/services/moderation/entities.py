"""Deciding an entity candidate: approve (a new entity or the one of its name and type),
reject (its name is blocklisted) or alias (its names join another entity's aliases)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction

from kg.identity import clean, norm
from kg.models import Blocklist, Entity, EntityCandidate
from kg.selectors.visibility import memories_visible_to
from kg.services.memories import entity_embed_on_commit, memory_visible
from kg.services.moderation.base import (
    Decided,
    DecisionError,
    DecisionItem,
    block,
    pending_candidate,
    reviewed,
    viewer_of,
)


def decide_entity(item: DecisionItem, reviewer: User | None) -> Decided:
    cand = pending_candidate(EntityCandidate, item)
    if isinstance(cand, tuple):
        return cand
    if item.decision == "approve":
        return _entity_approve(cand, item, reviewer)
    if item.decision == "reject":
        return _entity_reject(cand, item, reviewer)
    return _entity_alias(cand, item, reviewer)


def _entity_approve(cand: EntityCandidate, item: DecisionItem, reviewer: User | None) -> Decided:
    """Promote the candidate: a new entity, or the one its name and type already name."""
    entity, created = _entity_for(cand)
    hidden = not created and not memory_visible(entity, viewer_of(reviewer))
    if hidden and not _same_owner(entity, cand):
        # The name is taken (globally unique) by a memory of someone's private thought.
        # Reusing it would file this mention under a memory only its owner sees, and
        # naming it would tell the moderator it exists: refuse, as the API's upsert does.
        raise DecisionError(
            f"entity candidate {item.id}: the name {cand.name!r} ({cand.entity_type}) is "
            "taken by a memory you cannot see; alias the candidate or reject it"
        )
    if created:
        entity_embed_on_commit(entity_id=entity.pk)
    elif _names_may_join(entity, cand):
        _add_aliases(entity, cand.aliases)
    cand.promoted = entity
    reviewed(cand, item, reviewer)
    what = f"{entity.name!r} ({entity.entity_type})"
    if created:
        return f"created entity {what}", entity.pk, True
    if hidden:  # the owner's own memory, found again in another private thought of theirs
        return f"reused an entity {what} its owner keeps private", None, False
    return f"reused entity {entity.pk} {what}", entity.pk, False


def _entity_for(cand: EntityCandidate) -> tuple[Entity, bool]:
    """The entity of the candidate's name and type (locked), created when there is none;
    and whether it was created."""
    entity = (
        Entity.objects.select_for_update()
        .filter(name__iexact=cand.name, entity_type__iexact=cand.entity_type)
        .first()
    )
    if entity is not None:
        return entity, False
    try:
        with transaction.atomic():
            entity = Entity.objects.create(
                name=clean(cand.name),
                entity_type=cand.entity_type.lower(),
                description=cand.description,
                data=cand.data,
                aliases=list(cand.aliases),
                source_thought_id=cand.staged_by_thought_id,
            )
    except IntegrityError:
        # Another moderator promoted the same name and type a moment ago.
        entity = Entity.objects.get(
            name__iexact=clean(cand.name), entity_type__iexact=cand.entity_type
        )
        return entity, False
    return entity, True


def _entity_reject(cand: EntityCandidate, item: DecisionItem, reviewer: User | None) -> Decided:
    """Reject the candidate and blocklist its name."""
    block(Blocklist.Kind.ENTITY, norm(cand.name), item, reviewer)
    reviewed(cand, item, reviewer)
    return f"rejected; {cand.name!r} is blocklisted", None, False


def _entity_alias(cand: EntityCandidate, item: DecisionItem, reviewer: User | None) -> Decided:
    """Add the candidate's names to the aliases of the entity ``item.canonical_id``."""
    if item.canonical_id is None:
        raise DecisionError(f"entity candidate {item.id}: alias needs canonical_id")
    # Only an entity the moderator can see: a hidden one fails exactly like a missing one.
    canonical = (
        memories_visible_to(viewer_of(reviewer), Entity)
        .select_for_update(of=("self",))
        .filter(id=item.canonical_id)
        .first()
    )
    if canonical is None:
        raise DecisionError(f"canonical entity {item.canonical_id} does not exist")
    if not _names_may_join(canonical, cand):
        raise DecisionError(
            f"entity candidate {item.id} comes from a private thought: its name cannot become "
            "an alias of a shared entity (everyone would read it); approve or reject it"
        )
    _add_aliases(canonical, [cand.name, *cand.aliases])
    cand.promoted = canonical
    reviewed(cand, item, reviewer)
    return f"{cand.name!r} is now an alias of {canonical.name!r}", canonical.pk, False


def _same_owner(entity: Entity, cand: EntityCandidate) -> bool:
    """Whether the candidate comes from a thought of the same owner as the hidden entity."""
    if entity.source_thought is None or cand.staged_by_thought is None:
        return False
    return bool(entity.source_thought.owner_id == cand.staged_by_thought.owner_id)


def _private_owner(thought: Any) -> int | None:
    """The owner of ``thought`` (a source thought, through its foreign key) when it is a
    private thought, else None."""
    return thought.owner_id if thought is not None and thought.is_private else None


def _names_may_join(entity: Entity, cand: EntityCandidate) -> bool:
    """Whether the candidate's names may be added to ``entity``'s aliases. Names read in a
    private thought are its owner's: they may join only an entity drawn from that owner's
    private thoughts, which nobody else sees either. On a shared entity every user would
    read them."""
    owner = _private_owner(cand.staged_by_thought)
    return owner is None or owner == _private_owner(entity.source_thought)


def _add_aliases(entity: Entity, names: Any) -> None:
    known = {norm(entity.name), *(norm(a) for a in entity.aliases)}
    added = [clean(n) for n in names if clean(n) and norm(n) not in known]
    if added:
        entity.aliases = [*entity.aliases, *dict.fromkeys(added)]
        entity.save(update_fields=["aliases", "updated_at"])
