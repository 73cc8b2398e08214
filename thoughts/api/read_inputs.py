"""Input of the thought read endpoints: the list filters (also search's), search and chain.

Numbers follow the original tools' leniency: numeric strings are accepted and values out of
range are clamped. Anything else that is not understood is a 400 naming the field.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from legacymind.api.inputs import Input, QuickFields
from legacymind.api.patterns import INTEGER_TEXT, numeric_text_or_number
from legacymind.dates import BadMoment, parse_moment
from thoughts import selectors
from thoughts.models import Thought
from thoughts.refs import THOUGHT_REF_PATTERN, parse_thought_ref
from thoughts.selectors import ThoughtFilters

THOUGHT_REF_SCHEMA = {
    "type": "string",
    "pattern": THOUGHT_REF_PATTERN,
    "description": "A thought id: <uuid> or thoughts:<uuid>.",
    "example": "thoughts:0b6f3c1e-1111-4a4a-9999-123456789abc",
}


@extend_schema_field(THOUGHT_REF_SCHEMA)
class ThoughtRefField(serializers.Field):  # type: ignore[type-arg]
    default_error_messages = {"invalid": "Expected a thought id: <uuid> or thoughts:<uuid>."}

    def to_internal_value(self, data: Any) -> uuid.UUID:
        try:
            return parse_thought_ref(str(data))
        except ValueError:
            self.fail("invalid")
            raise  # unreachable: fail() raises

    def to_representation(self, value: Any) -> str:
        return str(value)


@extend_schema_field(
    {
        # anyOf: a validator that does not assert formats takes any string as both, and oneOf
        # then refuses every value.
        "anyOf": [{"type": "string", "format": "date"}, {"type": "string", "format": "date-time"}],
        "description": "YYYY-MM-DD (the whole day, in the server's time zone) or an ISO 8601 "
        "date-time.",
        "example": "2026-11-24",
    }
)
class DateBoundField(serializers.Field):  # type: ignore[type-arg]
    """``YYYY-MM-DD`` (the whole day, in the server's time zone) or an ISO 8601 date-time."""

    default_error_messages = {
        "invalid": "Expected YYYY-MM-DD or an ISO 8601 date-time.",
        "out_of_range": "Date-time out of range once converted to UTC.",
    }

    def __init__(self, *, end_of_day: bool, **kwargs: Any) -> None:
        self.end_of_day = end_of_day
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> datetime:
        try:
            return parse_moment(str(data).strip(), end_of_day=self.end_of_day)
        except BadMoment as exc:
            self.fail("out_of_range" if exc.code == "out_of_range" else "invalid")
            raise AssertionError("unreachable") from None

    def to_representation(self, value: Any) -> str:
        return str(value)


@extend_schema_field(
    {
        "anyOf": [{"type": "integer"}, {"type": "string", "pattern": INTEGER_TEXT}],
        "description": "An integer, or one as text; clamped into range.",
    }
)
class ClampedIntegerField(serializers.IntegerField):
    """Lenient like the original tools: a number out of range is clamped, not refused, and a
    numeric string is read as the number."""

    reads_text = True

    def __init__(self, *, low: int, high: int, **kwargs: Any) -> None:
        self.low, self.high = low, high
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> int:
        return max(self.low, min(self.high, super().to_internal_value(data)))


@extend_schema_field(
    numeric_text_or_number("A number, or one as text; clamped into range.", empty=False)
)
class ClampedFloatField(serializers.FloatField):
    reads_text = True

    def __init__(self, *, low: float, high: float, **kwargs: Any) -> None:
        self.low, self.high = low, high
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> float:
        return max(self.low, min(self.high, super().to_internal_value(data)))


class TagsField(serializers.ListField):
    """Tags as a JSON list, repeated query parameters, or one comma-separated value."""

    child = serializers.RegexField(r"^[\w.-]{1,64}$")

    def to_internal_value(self, data: Any) -> list[str]:
        if isinstance(data, str):
            data = [data]
        if isinstance(data, list) and all(isinstance(item, str) for item in data):
            data = [tag.strip() for item in data for tag in item.split(",") if tag.strip()]
        return super().to_internal_value(data)


class ThoughtFilterInput(QuickFields, Input):
    session_id = serializers.CharField(max_length=128, required=False)
    chain_id = serializers.CharField(max_length=128, required=False)
    previous_thought_id = ThoughtRefField(required=False)
    revises_thought = ThoughtRefField(required=False)
    branch_from = ThoughtRefField(required=False)
    origin = serializers.ChoiceField(
        choices=Thought.Origin.choices,
        required=False,
        help_text="inner_voice: syntheses; inner_voice.feedback: their follow-up questions.",
    )
    mode = serializers.RegexField(r"^[a-z_]{1,32}$", required=False)
    tags = TagsField(required=False, help_text="Comma-separated, repeated, or a JSON list.")
    tags_match = serializers.ChoiceField(choices=["any", "all"], default="any")
    date_from = DateBoundField(end_of_day=False, required=False, help_text="Inclusive.")
    # A range whose ends are the wrong way round matches nothing, like any filter no row meets.
    date_to = DateBoundField(end_of_day=True, required=False, help_text="Inclusive.")
    confidence_gte = ClampedFloatField(low=0.0, high=1.0, required=False)
    confidence_lte = ClampedFloatField(low=0.0, high=1.0, required=False)

    def filters(self) -> ThoughtFilters:
        data = self.validated_data
        return ThoughtFilters(
            **{name: data.get(name) for name in _DIRECT},
            tags=tuple(data.get("tags") or ()),
            tags_match=data["tags_match"],
            created_gte=data.get("date_from"),
            created_lte=data.get("date_to"),
        )


_DIRECT = (
    "session_id", "chain_id", "previous_thought_id", "revises_thought", "branch_from", "origin",
    "mode", "confidence_gte", "confidence_lte",
)  # fmt: skip


class SearchInput(ThoughtFilterInput):
    query = serializers.CharField(max_length=10_000, help_text="Text to embed and search for.")
    target = serializers.ChoiceField(
        choices=selectors.SEARCH_TARGETS,
        default="mixed",
        help_text="KG memories (entity, observation, mixed = both) or only thoughts.",
    )
    include_thoughts = serializers.BooleanField(
        default=False, help_text="Also search your thoughts (implied by target=thoughts)."
    )
    top_k_memories = ClampedIntegerField(low=1, high=50, default=10, help_text="1-50.")
    top_k_thoughts = ClampedIntegerField(low=1, high=50, default=5, help_text="1-50.")
    sim_thresh = ClampedFloatField(low=0.0, high=1.0, default=0.0, help_text="0-1, inclusive.")
    order = serializers.ChoiceField(
        choices=selectors.SEARCH_ORDERS,
        required=False,
        help_text="Of thoughts. Default: created_at_asc with session_id/chain_id, else similarity.",
    )


class ChainInput(Input):
    depth = serializers.IntegerField(min_value=1, max_value=selectors.CHAIN_MAX_DEPTH, default=10)
