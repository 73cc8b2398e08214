"""Applying moderators' decisions: each item by its kind's module, in one transaction."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.auth.models import User
from django.db import transaction

from kg.models import EdgeCandidate, EntityCandidate, ObservationCandidate
from kg.services.moderation.base import (
    DECISIONS,
    KINDS,
    STATUS,
    AnyCandidate,
    Decided,
    DecisionError,
    DecisionItem,
    DecisionOutcome,
)
from kg.services.moderation.edges import decide_edge
from kg.services.moderation.entities import decide_entity
from kg.services.moderation.observations import decide_observation

_MODELS: dict[str, type[AnyCandidate]] = {
    "entity": EntityCandidate,
    "edge": EdgeCandidate,
    "observation": ObservationCandidate,
}
_DECIDE: dict[str, Callable[[DecisionItem, User | None], Decided]] = {
    "entity": decide_entity,
    "edge": decide_edge,
    "observation": decide_observation,
}


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
                status, ok = STATUS[item.decision].value, True
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
