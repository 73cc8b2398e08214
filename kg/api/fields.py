"""Fields of the KG API: each input accepts, and each output shows, only what the requester may
see."""

from __future__ import annotations

import uuid
from typing import Any

from django.db.models import QuerySet
from rest_framework import serializers

from kg.models import Entity
from kg.selectors.sources import own_source_ids
from kg.selectors.visibility import memories_visible_to
from legacymind.api.fields import UUIDStringField
from legacymind.users import Viewer
from thoughts.selectors.visibility import thoughts_visible_to


class SourceThought(UUIDStringField):
    """The id of a thought a memory is drawn from: one of the requester's own thoughts.

    Another user's thought is refused like a missing one, so the field reveals nothing about
    which ids exist (and nobody can tie a memory to someone else's private thought).
    """

    default_error_messages = {"unknown": "No thought {value} of yours."}
    refers = True  # a missing or hidden thought is a 404 (legacymind.api.inputs)

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


_OWN_SOURCES = "own_sources"


class OwnSourceThought(serializers.UUIDField):
    """The thought a memory was drawn from, shown to that thought's owner only: anyone else gets
    null, as for a memory drawn from no thought (the id would name a thought they cannot open).
    The serializer's context says which ids are the viewer's (``source_context``)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault(
            "help_text", "Your thought this was drawn from; null if none, or not yours."
        )
        super().__init__(read_only=True, allow_null=True, **kwargs)

    def to_representation(self, value: uuid.UUID) -> Any:
        # A serializer built without the context is a bug to see, not a quiet null.
        return super().to_representation(value) if value in self.context[_OWN_SOURCES] else None


def source_context(viewer: Viewer, *rows: Any) -> dict[str, Any]:
    """Serializer context for ``rows`` (memories) shown to ``viewer``: which of their source
    thoughts are the viewer's (the KG's selector, as the pages use it)."""
    return {_OWN_SOURCES: own_source_ids(viewer, *rows)}
