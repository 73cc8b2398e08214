"""The drop-in tools' arguments, as the reference server names them, and their answers' shapes."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from legacymind.api.inputs import Input


def _name() -> serializers.CharField:
    return serializers.CharField(max_length=255)


def _input(class_name: str, /, **fields: Any) -> type[Input]:
    # Field names like "from" are Python keywords: the class is built from a mapping.
    return type(class_name, (Input,), {"__module__": __name__, **fields})


EntityIn = _input(
    "MemoryEntity",
    name=_name(),
    entityType=serializers.CharField(max_length=64),
    observations=serializers.ListField(child=serializers.CharField(), default=list),
)
RelationIn = _input(
    "MemoryRelation",
    **{
        "from": _name(),
        "to": _name(),
        "relationType": serializers.RegexField(r"^[A-Za-z][\w ]*$", max_length=64),
    },
)
ObservationIn = _input(
    "MemoryObservation",
    entityName=_name(),
    contents=serializers.ListField(child=serializers.CharField(), allow_empty=False),
)
DeletionIn = _input(
    "MemoryDeletion",
    entityName=_name(),
    observations=serializers.ListField(child=serializers.CharField()),
)
Names = serializers.ListField
CreateEntities = _input("CreateEntitiesInput", entities=EntityIn(many=True, allow_empty=False))
CreateRelations = _input("CreateRelationsInput", relations=RelationIn(many=True))
AddObservations = _input("AddObservationsInput", observations=ObservationIn(many=True))
DeleteEntities = _input("DeleteEntitiesInput", entityNames=Names(child=serializers.CharField()))
DeleteObservations = _input("DeleteObservationsInput", deletions=DeletionIn(many=True))
DeleteRelations = _input("DeleteRelationsInput", relations=RelationIn(many=True))
ReadGraph = _input(
    "ReadGraphInput",
    limit=serializers.IntegerField(min_value=1, max_value=500, default=100),
    cursor=serializers.IntegerField(min_value=0, default=0, help_text="nextCursor of a page."),
)
SearchNodes = _input(
    "SearchNodesInput",
    query=serializers.CharField(max_length=10_000),
    limit=serializers.IntegerField(min_value=1, max_value=50, default=10),
)
OpenNodes = _input("OpenNodesInput", names=Names(child=_name()))

ITEMS = {"type": "array", "items": {"type": "object"}}
RESULTS = {"type": "object", "properties": {"results": ITEMS}, "required": ["results"]}
GRAPH = {
    "type": "object",
    "properties": {"entities": ITEMS, "relations": ITEMS},
    "required": ["entities", "relations"],
}
PAGE = {
    **GRAPH,
    "properties": {
        "entities": ITEMS,
        "relations": ITEMS,
        "nextCursor": {"type": ["integer", "null"]},
        "total": {"type": "integer"},
    },
}
