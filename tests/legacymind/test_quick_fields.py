"""``legacymind.api.inputs.QuickFields``: an input built per request from one prototype of its
fields validates exactly as the plain ``Input`` does, and its instances share no binding."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework import serializers

from legacymind.api.inputs import Input, QuickFields


def _pair(base: tuple[type, ...]) -> type[serializers.Serializer[Any]]:
    class Item(serializers.Serializer[Any]):
        n = serializers.IntegerField(min_value=0)

    class Body(*base):  # type: ignore[misc]
        name = serializers.CharField(max_length=5)
        count = serializers.IntegerField(required=False, default=3)
        tags = serializers.ListField(child=serializers.CharField(max_length=3), required=False)
        item = Item(required=False)

    return Body


PLAIN = _pair((Input,))
QUICK = _pair((QuickFields, Input))

BODIES = [
    {"name": "abc"},
    {"name": "abc", "count": 7, "tags": ["a", "bb"], "item": {"n": 2}},
    {"name": "toolong", "tags": ["long!"], "item": {"n": -1}},
    {"name": "abc", "tagz": []},
    {"count": "x"},
]


@pytest.mark.parametrize("body", BODIES)
def test_quick_inputs_validate_as_plain_ones(body: dict[str, Any]) -> None:
    plain, quick = PLAIN(data=body), QUICK(data=body)
    assert quick.is_valid() == plain.is_valid()
    assert quick.errors == plain.errors
    if plain.errors == {}:
        assert quick.validated_data == plain.validated_data


def test_instances_share_no_binding() -> None:
    first, second = QUICK(data=BODIES[1]), QUICK(data=BODIES[2])
    assert first.is_valid() and not second.is_valid()
    for name in ("name", "tags", "item"):
        assert first.fields[name] is not second.fields[name]
        assert first.fields[name].parent is first and second.fields[name].parent is second
    assert first.fields["tags"].child is not second.fields["tags"].child
    assert first.fields["tags"].child.parent is first.fields["tags"]
    assert first.validated_data["tags"] == ["a", "bb"]
