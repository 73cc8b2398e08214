"""Claiming a caller-chosen thought id: new, and no other user's link target."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db.models import Q

from legacymind.errors import Conflict
from thoughts.models import Thought


def thought_id_taken(thought_id: object) -> Conflict:
    """The 409 for a thought id that is stored already. Its field error is a message, like every
    other field error (not the id, which the request itself holds)."""
    return Conflict(
        f"thought {thought_id} already exists",
        fields={"thought_id": ["A thought with this id exists already."]},
    )


def thought_id_claim(*, thought_id: object, owner: User) -> None:
    """A caller-chosen id must be new, and not the target of another user's forward link:
    claiming that would leave their link unable to resolve to the thought they meant. Another
    user's thought or link reads as "not available", naming nothing of theirs."""
    linked = Q(previous_thought_id=thought_id) | Q(revises_thought_id=thought_id)
    rows = list(
        Thought.objects.filter(Q(id=thought_id) | linked | Q(branch_from_id=thought_id))
        .values_list("id", "owner_id")
        .distinct()[:100]
    )
    if any(row_owner != owner.pk for _, row_owner in rows):
        raise Conflict(
            f"thought id {thought_id} is not available",
            fields={"thought_id": ["This id is not available: choose another."]},
        )
    if any(row_id == thought_id for row_id, _ in rows):
        raise thought_id_taken(thought_id)
