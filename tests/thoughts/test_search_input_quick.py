"""The search and list filters build their fields from one prototype (``QuickFields``): they
validate every body as the same inputs built the plain DRF way do, errors included."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework import serializers

from thoughts.api.read_inputs import SearchInput, ThoughtFilterInput


class PlainSearch(SearchInput):
    def get_fields(self) -> dict[str, Any]:
        return serializers.Serializer.get_fields(self)


class PlainFilters(ThoughtFilterInput):
    def get_fields(self) -> dict[str, Any]:
        return serializers.Serializer.get_fields(self)


BODIES = [
    {"query": "why redis"},
    {
        "query": "why redis",
        "target": "thoughts",
        "top_k_memories": "80",
        "sim_thresh": 1.5,
        "tags": "infra, db",
        "date_from": "2026-11-01",
        "date_to": "2026-11-27T10:00:00Z",
        "previous_thought_id": "thoughts:2f1c6c1e-7d0a-4d1e-9a55-5b2f5d0c8e11",
        "confidence_gte": "0.2",
    },
    {"query": "", "target": "everything", "tags": ["bad tag!"], "date_from": "yesterday"},
    {"query": "x", "top_k_thoughts": "many", "branch_from": "not-a-ref", "tagz": "a"},
    {"target": "entity"},
]


@pytest.mark.parametrize("body", BODIES)
def test_search_input_validates_as_a_plain_one(body: dict[str, Any]) -> None:
    quick, plain = SearchInput(data=body), PlainSearch(data=body)
    assert quick.is_valid() == plain.is_valid()
    assert quick.errors == plain.errors
    if not plain.errors:
        assert quick.validated_data == plain.validated_data
        assert quick.filters() == plain.filters()


@pytest.mark.parametrize("body", BODIES)
def test_filter_input_validates_as_a_plain_one(body: dict[str, Any]) -> None:
    body = {k: v for k, v in body.items() if k != "query"}
    quick, plain = ThoughtFilterInput(data=body), PlainFilters(data=body)
    assert quick.is_valid() == plain.is_valid()
    assert quick.errors == plain.errors
    if not plain.errors:
        assert quick.filters() == plain.filters()


def test_two_searches_share_no_field() -> None:
    first, second = SearchInput(data=BODIES[1]), SearchInput(data=BODIES[2])
    assert first.is_valid() and not second.is_valid()
    tags, other = first.fields["tags"], second.fields["tags"]
    assert isinstance(tags, serializers.ListField) and isinstance(other, serializers.ListField)
    assert tags is not other and tags.child is not other.child
    assert tags.parent is first and tags.child.parent is tags
    assert first.validated_data["tags"] == ["infra", "db"]
