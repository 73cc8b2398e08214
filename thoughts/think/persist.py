"""The one write of a thought: the row with its embedding, injected memories and analysis,
the access bump of the memories it used, and the KG extraction queued for after commit."""

from __future__ import annotations

from collections.abc import Iterable

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from kg.models import Entity, Observation
from kg.services import thought_extract_on_commit
from legacymind.errors import Conflict
from thoughts.models import Thought
from thoughts.think.injection import Injected


def _bump(injected: Iterable[Injected]) -> None:
    now = timezone.now()
    for kind, model in (("entity", Entity), ("observation", Observation)):
        ids = [item.candidate.id for item in injected if item.candidate.kind == kind]
        if ids:
            model.objects.filter(id__in=ids).update(
                access_count=F("access_count") + 1, last_accessed=now
            )


def thought_store(*, thought: Thought, injected: list[Injected], extract: bool = True) -> Thought:
    """Insert ``thought`` (never update: an existing id is a 409) and everything that must
    change with it, in one transaction."""
    try:
        with transaction.atomic():
            thought.save(force_insert=True)
            _bump(injected)
            if extract:
                thought_extract_on_commit(thought_id=thought.id, origin=None)
    except IntegrityError as exc:
        if Thought.objects.filter(id=thought.id).exists():
            raise Conflict(
                f"thought {thought.id} already exists", fields={"thought_id": [str(thought.id)]}
            ) from exc
        raise
    return thought
