"""What every kind of decision shares: the items and outcomes, the error, the reviewer as rows
record them, and the opening every decision makes on its locked candidate."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import QuerySet
from django.utils import timezone

from kg.identity import clean
from kg.models import (
    Blocklist,
    CandidateStatus,
    EdgeCandidate,
    Entity,
    EntityCandidate,
    ObservationCandidate,
)
from legacymind.errors import ServiceError
from legacymind.users import Viewer

DECISIONS = ("approve", "reject", "alias")
KINDS = ("entity", "edge", "observation")
STATUS = {
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


AnyCandidate = EntityCandidate | EdgeCandidate | ObservationCandidate
C = TypeVar("C", EntityCandidate, EdgeCandidate, ObservationCandidate)

# What a decision returns: its detail, the row the candidate became, and whether that row is
# new (a dry run rolls it back, so its id is not reported).
Decided = tuple[str, int | None, bool]


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


def recorded(reviewer: User | None) -> User | None:
    """The reviewer as a row records them: None for nobody (a dry run without a user)."""
    return reviewer if reviewer is not None and reviewer.pk else None


def viewer_of(reviewer: User | None) -> Viewer:
    """The reviewer as visibility rules see them: nobody is an anonymous viewer."""
    user = recorded(reviewer)
    return user if user is not None else AnonymousUser()


def pending_candidate(model: type[C], item: DecisionItem) -> C | Decided:
    """The candidate ``item`` decides, locked, when it is pending. Otherwise what the decision
    answers: an item decided the same way before succeeds again (the caller may retry), one
    decided otherwise fails, as does a missing candidate."""
    cand = model.objects.select_for_update().filter(id=item.id).first()
    if cand is None:
        raise DecisionError(f"{item.kind} candidate {item.id} does not exist")
    if cand.status == CandidateStatus.PENDING:
        return cand
    if cand.status == STATUS[item.decision]:
        return f"already {cand.status}", cand.promoted_id, False
    raise DecisionError(f"{item.kind} candidate {item.id} is already {cand.status}")


def reviewed(cand: AnyCandidate, item: DecisionItem, reviewer: User | None) -> None:
    """Record the decision on the candidate (and the row it was promoted to, if any)."""
    cand.status = STATUS[item.decision]
    cand.reviewed_by = recorded(reviewer)
    cand.reviewed_at = timezone.now()
    cand.review_note = item.note
    cand.save(update_fields=["status", "reviewed_by", "reviewed_at", "review_note", "promoted"])


def block(kind: str, key: str, item: DecisionItem, reviewer: User | None) -> None:
    """Put ``key`` on the blocklist: staging never proposes it again."""
    Blocklist.objects.get_or_create(
        kind=kind,
        item=key[:600],
        defaults={
            "reason": item.note,
            "created_by": recorded(reviewer),
        },
    )
