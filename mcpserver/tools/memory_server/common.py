"""What the drop-in reads and writes share: how an observation is named, which entities the
caller sees and finds by name, and the statuses they answer."""

from __future__ import annotations

import hashlib

from django.contrib.auth.models import User
from django.db.models import QuerySet

from kg import selectors, services
from kg.models import Entity

STAGED = "pending"  # status of an item staged for the moderators
NOT_YOURS = "refused: only knowledge-graph moderators change or delete what is in the graph"


def observation_name(entity: str, text: str) -> str:
    """The KG observation's name: unique per entity and text, within the column's 255."""
    name = f"{entity}: {text}"
    if len(name) <= 255:
        return name
    return name[:240] + " #" + hashlib.sha1(name.encode()).hexdigest()[:12]


def visible(user: User) -> QuerySet[Entity]:
    return selectors.memories_visible_to(user, Entity)


def find(user: User, name: str) -> Entity | None:
    return services.entity_find(name=name, among=visible(user))
