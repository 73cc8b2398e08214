"""Input fields of the KG API: each accepts only what the requester may see."""

from __future__ import annotations

import uuid
from typing import Any

from django.db.models import QuerySet
from rest_framework import serializers

from kg.models import Entity
from legacymind.fields import UUIDStringField
from thoughts.selectors import memories_visible_to, thoughts_visible_to


class SourceThought(UUIDStringField):
    """The id of a thought a memory is drawn from: one of the requester's own thoughts.

    Another user's thought is refused like a missing one, so the field reveals nothing about
    which ids exist (and nobody can tie a memory to someone else's private thought).
    """

    default_error_messages = {"unknown": "No thought {value} of yours."}

    def to_internal_value(self, data: Any) -> uuid.UUID:
        value: uuid.UUID = super().to_internal_value(data)
        request = self.context.get("request")
        if request is None or not thoughts_visible_to(request.user).filter(pk=value).exists():
            self.fail("unknown", value=value)
        return value


class VisibleEntity(serializers.PrimaryKeyRelatedField):  # type: ignore[type-arg]
    """The id of an entity the requester can see. A hidden one (drawn from someone else's
    private thought) gets DRF's own "does not exist", so it reads exactly like a missing id."""

    queryset = Entity.objects.none()

    def get_queryset(self) -> QuerySet[Entity]:
        request = self.context.get("request")
        if request is None:
            return Entity.objects.none()
        return memories_visible_to(request.user, Entity)
