"""The one write of a thought: the row with its embedding, injected memories and analysis, in
one INSERT; after it commits, the access bump of the memories it used (batched, see
``touches``) and the KG extraction are queued.

The bump runs after commit, not inside the write: access counts are statistics, a late bump
loses nothing, and the thought's transaction never waits on row locks of popular memories.
The KG tables keep half of each page free (kg migrations 0003, 0004) so the bump is a HOT
update that never touches the HNSW index; without it each bumped row cost ~0.6 ms and left a
dead entry in the graph.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import nullcontext
from datetime import datetime
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.db.models import Q
from django.utils import timezone

from kg.models import Entity, Observation
from kg.services import thought_extract_on_commit
from legacymind.celery import publish_on_commit
from legacymind.errors import Conflict
from thoughts.models import Thought
from thoughts.think.injection import Injected


def thought_id_taken(thought_id: object) -> Conflict:
    """The 409 for a thought id that is stored already. Its field error is a message, like every
    other field error (not the id, which the request itself holds)."""
    return Conflict(
        f"thought {thought_id} already exists",
        fields={"thought_id": ["A thought with this id exists already."]},
    )


def thought_id_claim(*, thought_id: object, owner: Any) -> None:
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


def memories_bump(*, bumps: Mapping[tuple[str, int], tuple[int, datetime]]) -> int:
    """For each (kind, id) -> (uses, last use): access_count + uses and last_accessed = the last
    use (never moved back), in one UPDATE per table. Returns the rows updated."""
    touched = 0
    with connection.cursor() as cursor:
        for kind, model in (("entity", Entity), ("observation", Observation)):
            keys = sorted(key for key in bumps if key[0] == kind)
            if not keys:
                continue
            cursor.execute(
                f"UPDATE {model._meta.db_table} AS t "
                "SET access_count = t.access_count + v.n, "
                "last_accessed = GREATEST(t.last_accessed, v.at) "
                "FROM unnest(%s::bigint[], %s::int[], %s::timestamptz[]) AS v(id, n, at) "
                "WHERE t.id = v.id",
                [[k[1] for k in keys], [bumps[k][0] for k in keys], [bumps[k][1] for k in keys]],
            )
            touched += cursor.rowcount
    return touched


def memories_touch(*, entity_ids: list[int], observation_ids: list[int], at: datetime) -> int:
    """access_count + 1 and last_accessed = at (never moved back) for each memory used."""
    return memories_bump(
        bumps={
            **{("entity", pk): (1, at) for pk in entity_ids},
            **{("observation", pk): (1, at) for pk in observation_ids},
        }
    )


def _touch_on_commit(injected: list[Injected]) -> None:
    from thoughts.think.touches import touch_later

    ids: dict[str, list[int]] = {"entity": [], "observation": []}
    for item in injected:
        ids[item.candidate.kind].append(item.candidate.id)
    at = timezone.now()
    publish_on_commit(
        lambda: touch_later(entity_ids=ids["entity"], observation_ids=ids["observation"], at=at)
    )


def thought_store(*, thought: Thought, injected: list[Injected], extract: bool = True) -> Thought:
    """Insert ``thought`` (never update: an existing id is a 409), then queue what follows it
    once it is committed.

    The write is the one INSERT. Outside a transaction (a think request) it commits by itself,
    as atomic as the row is whole: an atomic block around it only cost every think a BEGIN
    and a COMMIT, two more round trips. Inside the caller's transaction (the inner voice's
    two linked thoughts) a savepoint keeps that transaction usable after a duplicate id."""
    try:
        with transaction.atomic() if connection.in_atomic_block else nullcontext():
            thought.save(force_insert=True)
    except IntegrityError as exc:
        if Thought.objects.filter(id=thought.id).exists():
            raise thought_id_taken(thought.id) from exc
        raise
    if injected:
        _touch_on_commit(injected)
    if extract:
        thought_extract_on_commit(thought_id=thought.id, origin=None)
    return thought
