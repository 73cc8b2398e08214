"""Who may see which memory: the one rule every read of the knowledge graph applies.

The graph is shared, but a memory drawn from someone's private thought stays theirs: it is
never shown, injected, cited or suggested to anyone else. The rule reads the source thought
through the foreign key only; the thoughts app decides who sees which thought.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from django.db.models import Q, QuerySet

from kg.models import Edge, Entity, Observation
from legacymind.users import Viewer, viewer_id

M = TypeVar("M", Entity, Observation, Edge)


def visible_q(owner_id: int | None) -> Q:
    """Memories with no source thought, from a shared one, or (``owner_id``) from one of that
    user's own thoughts, private or not."""
    shared = Q(source_thought__isnull=True) | Q(source_thought__is_private=False)
    if owner_id is not None:
        shared |= Q(source_thought__owner_id=owner_id)
    return shared


def memories_visible_to(viewer: Viewer, model: type[M]) -> QuerySet[M]:
    """The entities, observations or edges ``viewer`` may see."""
    return model._default_manager.filter(visible_q(viewer_id(viewer)))


Memory = Entity | Observation


def memories_by_id(
    viewer: Viewer, *, entity_ids: Iterable[int] = (), observation_ids: Iterable[int] = ()
) -> dict[tuple[str, int], Memory]:
    """The entities and observations of those ids that ``viewer`` may see, by (kind, id); a
    hidden or missing one is simply absent. Without their vectors."""
    rows: dict[tuple[str, int], Memory] = {}
    wanted = list(entity_ids)
    if wanted:
        for entity in memories_visible_to(viewer, Entity).filter(pk__in=wanted).defer("embedding"):
            rows["entity", entity.pk] = entity
    wanted = list(observation_ids)
    if wanted:
        found = memories_visible_to(viewer, Observation).filter(pk__in=wanted).defer("embedding")
        for observation in found:
            rows["observation", observation.pk] = observation
    return rows
