"""Input fields shared by the API's serializers."""

from __future__ import annotations

import uuid
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from legacymind.api.patterns import JSON_OBJECT_SCHEMA
from legacymind.validators import no_nul


@extend_schema_field(JSON_OBJECT_SCHEMA)
class JSONObjectField(serializers.DictField):  # type: ignore[type-arg]
    """A JSON object of any values that Postgres can store."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.validators.append(no_nul)


class UUIDStringField(serializers.UUIDField):
    """A UUIDField that takes only a JSON string: DRF's reads 99999 as the UUID
    00000000-...-01869f, and the client is then told that id does not exist."""

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, str | uuid.UUID):  # a UUID: the pages validate through it too
            self.fail("invalid", value=data)
        return super().to_internal_value(data)


class StringField(serializers.CharField):
    """A CharField that takes only a JSON string: DRF's reads 5 as "5", a text nobody wrote."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return str(super().to_internal_value(data))
