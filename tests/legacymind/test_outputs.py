"""``legacymind.api.outputs.Output`` renders exactly what DRF's ``Serializer`` renders.

Each case declares one set of fields twice, once on DRF's ``Serializer`` and once on ``Output``,
and renders the same instances with both: nested objects, lists of them, dotted sources, the
instance itself (``source="*"``), dicts and objects, a missing optional value (left out), a
missing value with a default, null in the middle of a path, and a field that reads its own value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from rest_framework import serializers

from legacymind.api.outputs import Output


@dataclass
class Inner:
    id: int
    title: str
    score: float


@dataclass
class Holder:
    name: str
    inner: Inner | None
    items: list[Inner]
    extra: dict[str, Any] = field(default_factory=dict)


class Upper(serializers.CharField):
    def get_attribute(self, instance: Any) -> str:
        return str(super().get_attribute(instance)).upper()


def _pair(base: type[serializers.Serializer[Any]]) -> type[serializers.Serializer[Any]]:
    class Item(base):  # type: ignore[valid-type,misc]
        id = serializers.IntegerField()
        title = serializers.CharField()
        score = serializers.FloatField()

    class Body(base):  # type: ignore[valid-type,misc]
        name = serializers.CharField()
        shout = Upper(source="name")
        inner_label = serializers.CharField(source="inner.title", allow_null=True)
        inner = Item(allow_null=True)
        items = Item(many=True)
        whole = serializers.CharField(source="*")
        extra = serializers.DictField()
        optional = serializers.CharField(source="absent", required=False)
        defaulted = serializers.CharField(source="absent", default="fallback")

    return Body


DRF = _pair(serializers.Serializer)
FAST = _pair(Output)

INSTANCES = [
    Holder("a", Inner(1, "one", 0.5), [Inner(2, "two", 1.0), Inner(3, "three", 0.25)]),
    Holder("b", None, [], {"k": 1, "nested": {"x": [1, 2]}}),
    Holder("", Inner(0, "", 0.0), [Inner(4, "four", -1.5)], {"none": None}),
]


@pytest.mark.parametrize("instance", INSTANCES, ids=["nested", "null-inner", "empty-strings"])
def test_output_renders_what_drf_renders(instance: Holder) -> None:
    assert FAST().to_representation(instance) == DRF().to_representation(instance)


def test_dict_instances_render_alike() -> None:
    class Item(Output):
        id = serializers.IntegerField()
        title = serializers.CharField(source="name")

    class DrfItem(serializers.Serializer[Any]):
        id = serializers.IntegerField()
        title = serializers.CharField(source="name")

    row = {"id": "7", "name": 12}
    assert (
        Item().to_representation(row)
        == DrfItem().to_representation(row)
        == {"id": 7, "title": "12"}
    )


def test_a_missing_required_value_is_an_error_as_in_drf() -> None:
    class Item(Output):
        id = serializers.IntegerField(source="missing")

    with pytest.raises(AttributeError):
        Item().to_representation(Inner(1, "x", 0.0))


def test_one_instance_renders_many_results() -> None:
    renderer = FAST()
    first, second = (renderer.to_representation(i) for i in INSTANCES[:2])
    assert first["name"] == "a" and second["name"] == "b"
    assert first == DRF().to_representation(INSTANCES[0])
