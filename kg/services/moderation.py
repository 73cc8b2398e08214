"""Moderators' decisions on staged candidates: approve, reject (blocklist) and alias."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.utils import timezone

from kg.identity import clean, edge_key, norm
from kg.models import (
    Blocklist,
    CandidateStatus,
    Edge,
    EdgeCandidate,
    Entity,
    EntityCandidate,
    ObservationCandidate,
)
from kg.selectors.visibility import memories_visible_to
from kg.services.memories import entity_embed_on_commit, memory_visible, observation_upsert
from legacymind.errors import ServiceError
from legacymind.users import Viewer

DECISIONS = ("approve", "reject", "alias")
KINDS = ("entity", "edge", "observation")
_STATUS = {
    "approve": CandidateStatus.APPROVED,
    "reject": CandidateStatus.REJECTED,
    "alias": CandidateStatus.ALIASED,
}


class DecisionError(ServiceError):
    error_code = "decision_failed"


@dataclass(frozen=True)
class DecisionItem:
    id: int
    kind: str  # "entity" | "edge" | "observation"
    decision: str  # "approve" | "reject" | "alias"
    note: str = ""
    canonical_id: int | None = None


@dataclass(frozen=True)
class DecisionOutcome:
    id: int
    kind: str
    decision: str
    ok: bool
    status: str
    promoted_id: int | None
    detail: str


def entity_find(*, name: str, among: QuerySet[Entity] | None = None) -> Entity | None:
    """The entity a name refers to: by name, else by alias (case-insensitive), among ``among``
    (default: every entity)."""
    entities = Entity.objects.all() if among is None else among
    by_name = entities.filter(name__iexact=clean(name)).order_by("id").first()
    if by_name is not None:
        return by_name
    return (
        entities.extra(
            where=["EXISTS (SELECT 1 FROM unnest(aliases) a WHERE lower(a) = lower(%s))"],
            params=[clean(name)],
        )
        .order_by("id")
        .first()
    )


def _recorded(reviewer: User | None) -> User | None:
    """The reviewer as a row records them: None for nobody (a dry run without a user)."""
    return reviewer if reviewer is not None and reviewer.pk else None


AnyCandidate = EntityCandidate | EdgeCandidate | ObservationCandidate


def _reviewed(cand: AnyCandidate, item: DecisionItem, reviewer: User | None) -> None:
    cand.status = _STATUS[item.decision]
    cand.reviewed_by = _recorded(reviewer)
    cand.reviewed_at = timezone.now()
    cand.review_note = item.note
    cand.save(update_fields=["status", "reviewed_by", "reviewed_at", "review_note", "promoted"])


def _block(kind: str, key: str, item: DecisionItem, reviewer: User | None) -> None:
    Blocklist.objects.get_or_create(
        kind=kind,
        item=key[:600],
        defaults={
            "reason": item.note,
            "created_by": _recorded(reviewer),
        },
    )


# What a decision returns: its detail, the row the candidate became, and whether that row is
# new (a dry run rolls it back, so its id is not reported).
Decided = tuple[str, int | None, bool]


def _decide_entity(item: DecisionItem, reviewer: User | None) -> Decided:
    cand = EntityCandidate.objects.select_for_update().filter(id=item.id).first()
    if cand is None:
        raise DecisionError(f"entity candidate {item.id} does not exist")
    if cand.status != CandidateStatus.PENDING:
        if cand.status == _STATUS[item.decision]:
            return f"already {cand.status}", cand.promoted_id, False
        raise DecisionError(f"entity candidate {item.id} is already {cand.status}")
    if item.decision == "approve":
        return _entity_approve(cand, item, reviewer)
    if item.decision == "reject":
        return _entity_reject(cand, item, reviewer)
    return _entity_alias(cand, item, reviewer)


def _entity_approve(cand: EntityCandidate, item: DecisionItem, reviewer: User | None) -> Decided:
    """Promote the candidate: a new entity, or the one its name and type already name."""
    entity, created = _entity_for(cand)
    hidden = not created and not memory_visible(entity, _viewer(reviewer))
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
    _reviewed(cand, item, reviewer)
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
    _block(Blocklist.Kind.ENTITY, norm(cand.name), item, reviewer)
    _reviewed(cand, item, reviewer)
    return f"rejected; {cand.name!r} is blocklisted", None, False


def _entity_alias(cand: EntityCandidate, item: DecisionItem, reviewer: User | None) -> Decided:
    """Add the candidate's names to the aliases of the entity ``item.canonical_id``."""
    if item.canonical_id is None:
        raise DecisionError(f"entity candidate {item.id}: alias needs canonical_id")
    # Only an entity the moderator can see: a hidden one fails exactly like a missing one.
    canonical = (
        memories_visible_to(_viewer(reviewer), Entity)
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
    _reviewed(cand, item, reviewer)
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


def _endpoints_for(cand: EdgeCandidate, reviewer: User | None) -> QuerySet[Entity]:
    """The entities an edge candidate's names may resolve to: those the moderator sees, and
    those drawn from thoughts of the candidate's own author (their private memories are the
    ones their private thought speaks of). Anyone else's private memories read as missing."""
    among = memories_visible_to(_viewer(reviewer), Entity)
    if cand.staged_by_thought is not None:
        author = cand.staged_by_thought.owner_id
        among = among | Entity.objects.filter(source_thought__owner_id=author)
    return among


def _viewer(reviewer: User | None) -> Viewer:
    recorded = _recorded(reviewer)
    return recorded if recorded is not None else AnonymousUser()


def _add_aliases(entity: Entity, names: Any) -> None:
    known = {norm(entity.name), *(norm(a) for a in entity.aliases)}
    added = [clean(n) for n in names if clean(n) and norm(n) not in known]
    if added:
        entity.aliases = [*entity.aliases, *dict.fromkeys(added)]
        entity.save(update_fields=["aliases", "updated_at"])


def _decide_edge(item: DecisionItem, reviewer: User | None) -> Decided:
    cand = EdgeCandidate.objects.select_for_update().filter(id=item.id).first()
    if cand is None:
        raise DecisionError(f"edge candidate {item.id} does not exist")
    if cand.status != CandidateStatus.PENDING:
        if cand.status == _STATUS[item.decision]:
            return f"already {cand.status}", cand.promoted_id, False
        raise DecisionError(f"edge candidate {item.id} is already {cand.status}")
    if item.decision == "alias":
        raise DecisionError(f"edge candidate {item.id}: only entity candidates can be aliased")
    if item.decision == "reject":
        return _edge_reject(cand, item, reviewer)
    return _edge_approve(cand, item, reviewer)


def _edge_reject(cand: EdgeCandidate, item: DecisionItem, reviewer: User | None) -> Decided:
    """Reject the candidate and blocklist its relation."""
    _block(
        Blocklist.Kind.EDGE, edge_key(cand.source_name, cand.target_name, cand.rel_type),
        item, reviewer,
    )  # fmt: skip
    _reviewed(cand, item, reviewer)
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
    _reviewed(cand, item, reviewer)
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


def _decide_observation(item: DecisionItem, reviewer: User | None) -> Decided:
    cand = ObservationCandidate.objects.select_for_update().filter(id=item.id).first()
    if cand is None:
        raise DecisionError(f"observation candidate {item.id} does not exist")
    if cand.status != CandidateStatus.PENDING:
        if cand.status == _STATUS[item.decision]:
            return f"already {cand.status}", cand.promoted_id, False
        raise DecisionError(f"observation candidate {item.id} is already {cand.status}")
    if item.decision == "alias":
        raise DecisionError(
            f"observation candidate {item.id}: only entity candidates can be aliased"
        )
    if item.decision == "reject":
        # No blocklist entry: the rejected candidate keeps its text from being staged again.
        _reviewed(cand, item, reviewer)
        return "rejected; it will not be staged again", None, False
    return _observation_approve(cand, item, reviewer)


def _observation_entity(cand: ObservationCandidate, reviewer: User | None) -> Entity | None:
    """The entity the candidate is of, among those the moderator sees: the one it was staged
    against, else (staged with a pending entity, or that entity since deleted) the one its
    name names now."""
    among = memories_visible_to(_viewer(reviewer), Entity)
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
            viewer=_viewer(reviewer),
        )
    except ServiceError as exc:  # the name is taken by a memory the moderator cannot see
        raise DecisionError(f"observation candidate {item.id}: {exc.detail}") from None
    cand.promoted = obs
    _reviewed(cand, item, reviewer)
    of = f" of {entity.name!r}" if entity else ""
    return f"{'created' if created else 'updated'} observation {obs.name!r}{of}", obs.pk, created


_MODELS: dict[str, type[AnyCandidate]] = {
    "entity": EntityCandidate,
    "edge": EdgeCandidate,
    "observation": ObservationCandidate,
}
_DECIDE = {"entity": _decide_entity, "edge": _decide_edge, "observation": _decide_observation}


def _status_now(item: DecisionItem) -> str:
    model = _MODELS[item.kind]
    status = model.objects.filter(id=item.id).values_list("status", flat=True).first()
    return str(status) if status is not None else "missing"


def candidates_decide(
    *,
    items: list[DecisionItem],
    reviewer: User | None,
    dry_run: bool = False,
) -> list[DecisionOutcome]:
    """Apply each decision in its own savepoint inside one transaction: a failing item is
    reported and leaves no trace, the others apply. Entity items run before the others so an
    edge or an observation can resolve to an entity approved in the same call. ``dry_run``
    rolls everything back and reports what would have happened, without the id of a row it
    would create (the real run assigns another). Alias targets are limited to entities ``reviewer`` can see."""
    for item in items:
        if item.kind not in KINDS or item.decision not in DECISIONS:
            raise DecisionError(
                f"item {item.id}: unknown kind {item.kind!r} or decision {item.decision!r}"
            )
    ordered = sorted(range(len(items)), key=lambda i: items[i].kind != "entity")
    outcomes: dict[int, DecisionOutcome] = {}
    with transaction.atomic():
        for index in ordered:
            item = items[index]
            decide = _DECIDE[item.kind]
            try:
                with transaction.atomic():
                    detail, promoted, created = decide(item, reviewer)
                status, ok = _STATUS[item.decision].value, True
            except DecisionError as exc:
                # The candidate's status as it stands (unchanged by this item), "missing" when
                # there is no such candidate.
                status = _status_now(item)
                detail, promoted, created, ok = exc.detail, None, False, False
            if dry_run and ok:
                detail = "dry run: " + detail
                promoted = None if created else promoted
            outcomes[index] = DecisionOutcome(
                item.id, item.kind, item.decision, ok, status, promoted, detail
            )
        if dry_run:
            transaction.set_rollback(True)
    return [outcomes[i] for i in range(len(items))]


def candidate_decide(
    *,
    kind: str,
    candidate_id: int,
    decision: str,
    reviewer: User | None,
    note: str = "",
    canonical_id: int | None = None,
) -> DecisionOutcome:
    """One decision; raises :class:`DecisionError` when it cannot apply."""
    (outcome,) = candidates_decide(
        items=[DecisionItem(candidate_id, kind, decision, note, canonical_id)], reviewer=reviewer
    )
    if not outcome.ok:
        raise DecisionError(outcome.detail)
    return outcome
