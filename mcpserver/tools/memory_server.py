"""The nine tools of ``@modelcontextprotocol/server-memory``, same names and argument shapes,
backed by the KG: an entity is a KG entity, an observation a KG observation of it (named
"<entity>: <text>", so the same text on two entities is two observations), a relation a KG
edge. Writes go through ``mcpserver.kgwrites`` (direct, or staged for the moderators); reads
show what the caller may see, plus the caller's own pending items, marked pending (pending
observations under their entity's ``pendingObservations``)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from functools import partial
from typing import Any

from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.db.models.functions import Lower
from rest_framework import serializers

from kg import selectors, services
from kg.models import Entity, Observation
from legacymind.api.inputs import Input
from mcpserver.kgwrites import may_moderate, retrying, stage, staged_origin, writes_direct
from mcpserver.registry import Call, Tool, register
from thoughts import selectors as thought_selectors
from thoughts.api.read_inputs import SearchInput

STAGED = "pending"  # status of an item staged for the moderators
NOT_YOURS = "refused: only knowledge-graph moderators change or delete what is in the graph"


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


def observation_name(entity: str, text: str) -> str:
    """The KG observation's name: unique per entity and text, within the column's 255."""
    name = f"{entity}: {text}"
    if len(name) <= 255:
        return name
    return name[:240] + " #" + hashlib.sha1(name.encode()).hexdigest()[:12]


def _visible(user: User) -> QuerySet[Entity]:
    return selectors.memories_visible_to(user, Entity)


def _find(user: User, name: str) -> Entity | None:
    return services.entity_find(name=name, among=_visible(user))


def _observe(user: User, entity: Entity, text: str) -> bool:
    def write() -> tuple[Observation, bool]:
        return services.observation_upsert(
            name=observation_name(entity.name, text),
            description=text,
            entity_id=entity.pk,
            viewer=user,
        )

    return retrying(write)[1]


def _staged_observations(
    user: User, entity_name: str, texts: list[str]
) -> list[services.StagedObservation]:
    """``texts`` as observations to stage on the entity ``entity_name`` names: one the caller
    sees (under its own name, as a direct write would file them), else one still pending."""
    entity = _find(user, entity_name)
    name = entity.name if entity is not None else entity_name
    return [
        services.StagedObservation(
            name=observation_name(name, text),
            description=text,
            entity_name=name,
            entity_id=entity.pk if entity is not None else None,
        )
        for text in texts
    ]


def _pending_entity(user: User, name: str) -> bool:
    """Whether the caller has staged an entity of this name that is still pending."""
    entities, _edges = selectors.candidate_querysets(status="pending")
    return entities.filter(origin=staged_origin(user), name__iexact=" ".join(name.split())).exists()


def create_entities(call: Call) -> dict[str, Any]:
    items, user = call.data["entities"], call.user
    if not writes_direct(user):
        observations = [
            obs for i in items for obs in _staged_observations(user, i["name"], i["observations"])
        ]
        stage(user, entities=[(i["name"], i["entityType"]) for i in items],
              observations=observations)  # fmt: skip
        return {"results": [{**i, "status": STAGED} for i in items]}
    results = []
    for item in items:
        upsert = partial(
            services.entity_upsert, name=item["name"], entity_type=item["entityType"], viewer=user
        )
        entity, created = retrying(upsert)
        for text in item["observations"]:
            _observe(user, entity, text)
        results.append({**item, "status": "created" if created else "exists"})
    return {"results": results}


def add_observations(call: Call) -> dict[str, Any]:
    results, user, direct = [], call.user, writes_direct(call.user)
    for item in call.data["observations"]:
        name, texts = item["entityName"], item["contents"]
        entity = _find(user, name)
        if direct and entity is not None:
            added = [text for text in texts if _observe(user, entity, text)]
            results.append({"entityName": name, "addedObservations": added, "status": "added"})
        # A non-moderator may observe an entity of theirs still waiting for the moderators.
        elif not direct and (entity is not None or _pending_entity(user, name)):
            stage(user, observations=_staged_observations(user, name, texts))
            results.append(
                {"entityName": name, "addedObservations": [], "pendingObservations": texts,
                 "status": STAGED}
            )  # fmt: skip
        else:
            results.append({**item, "addedObservations": [], "status": "not_found"})
    return {"results": results}


def create_relations(call: Call) -> dict[str, Any]:
    items, user = call.data["relations"], call.user
    if not writes_direct(user):
        stage(user, edges=[(i["from"], i["to"], i["relationType"]) for i in items])
        return {"results": [{**i, "status": STAGED} for i in items]}
    results = []
    for item in items:
        source, target = _find(user, item["from"]), _find(user, item["to"])
        if source is None or target is None:
            results.append({**item, "status": "not_found"})
            continue
        upsert = partial(
            services.edge_upsert,
            source_id=source.pk,
            target_id=target.pk,
            rel_type=item["relationType"],
            viewer=user,
        )
        _edge, created = retrying(upsert)
        results.append({**item, "status": "created" if created else "exists"})
    return {"results": results}


def delete_entities(call: Call) -> dict[str, Any]:
    results = []
    for name in call.data["entityNames"]:
        entity = _find(call.user, name)
        if not may_moderate(call.user):
            status = NOT_YOURS
        elif entity is None:
            status = "not_found"
        else:
            entity.delete()
            status = "deleted"
        results.append({"name": name, "status": status})
    return {"results": results}


def delete_observations(call: Call) -> dict[str, Any]:
    results = []
    for item in call.data["deletions"]:
        entity = _find(call.user, item["entityName"])
        if not may_moderate(call.user) or entity is None:
            results.append({**item, "status": NOT_YOURS if entity else "not_found"})
            continue
        names = [observation_name(entity.name, text) for text in item["observations"]]
        rows = selectors.memories_visible_to(call.user, Observation)
        rows.filter(entity=entity, name__in=names).delete()
        results.append({**item, "status": "deleted"})
    return {"results": results}


def delete_relations(call: Call) -> dict[str, Any]:
    results = []
    for item in call.data["relations"]:
        source, target = _find(call.user, item["from"]), _find(call.user, item["to"])
        if not may_moderate(call.user):
            results.append({**item, "status": NOT_YOURS})
            continue
        edges = selectors.visible_edges(call.user).filter(
            source=source, target=target, rel_type=item["relationType"]
        )
        deleted, _ = edges.delete() if source and target else (0, {})
        results.append({**item, "status": "deleted" if deleted else "not_found"})
    return {"results": results}


Match = Callable[[str], bool]  # which of the caller's pending names a read shows


def _graph(user: User, entities: list[Entity], *, pending: Match | None = None) -> dict[str, Any]:
    """The reference server's shape for ``entities``: their observations, the relations among
    them, and the caller's own pending entities and relations whose names ``pending`` takes."""
    ids = [e.pk for e in entities]
    texts: dict[int, list[str]] = {pk: [] for pk in ids}
    rows = selectors.memories_visible_to(user, Observation).filter(entity_id__in=ids)
    for entity_id, name, description in rows.order_by("created_at", "id").values_list(
        "entity_id", "name", "description"
    ):
        texts[entity_id].append(description or name)
    edges = selectors.visible_edges(user).filter(source_id__in=ids, target_id__in=ids)
    graph = {
        "entities": [
            {"name": e.name, "entityType": e.entity_type, "observations": texts[e.pk]}
            for e in entities
        ],
        "relations": [
            {"from": e.source.name, "to": e.target.name, "relationType": e.rel_type}
            for e in edges.select_related("source", "target").order_by("id")
        ],
    }
    if pending is not None:
        _add_pending(user, graph, pending)
    _add_pending_observations(user, graph)
    return graph


def _add_pending_observations(user: User, graph: dict[str, Any]) -> None:
    """The caller's own observations still in the moderation queue, on the entities of
    ``graph`` they are of, under ``pendingObservations``: the reference's observations are
    bare strings, with no room to mark one pending."""
    by_name = {e["name"].lower(): e for e in graph["entities"]}
    if not by_name:
        return
    rows = (
        selectors.observation_candidates(status="pending")
        .filter(origin=staged_origin(user))
        .annotate(entity_lower=Lower("entity_name"))
        .filter(entity_lower__in=by_name)
        .order_by("created_at", "id")
    )
    for cand in rows:
        entity = by_name[cand.entity_lower]
        entity.setdefault("pendingObservations", []).append(cand.description or cand.name)


def _add_pending(user: User, graph: dict[str, Any], match: Match) -> None:
    """The caller's own candidates still in the moderation queue, marked pending."""
    entities, edges = selectors.candidate_querysets(status="pending")
    origin = staged_origin(user)
    for cand in entities.filter(origin=origin).order_by("created_at", "id"):
        if match(cand.name):
            graph["entities"].append(
                {"name": cand.name, "entityType": cand.entity_type, "observations": [],
                 "status": STAGED}
            )  # fmt: skip
    for edge in edges.filter(origin=origin).order_by("created_at", "id"):
        if match(edge.source_name) and match(edge.target_name):
            graph["relations"].append(
                {"from": edge.source_name, "to": edge.target_name,
                 "relationType": edge.rel_type, "status": STAGED}
            )  # fmt: skip


def _any(name: str) -> bool:
    return True


def read_graph(call: Call) -> dict[str, Any]:
    start, limit = call.data["cursor"], call.data["limit"]
    everything = _visible(call.user).defer("embedding").order_by("name", "id")
    total = everything.count()
    page = list(everything[start : start + limit])
    graph = _graph(call.user, page, pending=_any if start == 0 else None)
    more = start + limit < total
    return {**graph, "nextCursor": start + limit if more else None, "total": total}


def search_nodes(call: Call) -> dict[str, Any]:
    form = SearchInput(data={"query": call.data["query"], "top_k_memories": call.data["limit"]})
    form.is_valid(raise_exception=True)
    found = thought_selectors.search(
        user=call.user,
        query=call.data["query"],
        target="mixed",
        include_thoughts=False,
        top_k_memories=call.data["limit"],
        top_k_thoughts=1,
        sim_thresh=0.0,
        filters=form.filters(),
        order=None,
    )
    entity_ids = [hit.id for hit in found.memories if hit.kind == "entity"]
    observed = [hit.id for hit in found.memories if hit.kind == "observation"]
    rows = selectors.memories_visible_to(call.user, Observation).filter(pk__in=observed)
    entity_ids += [pk for pk in rows.values_list("entity_id", flat=True) if pk is not None]
    order = {pk: i for i, pk in enumerate(dict.fromkeys(entity_ids))}
    entities = sorted(_visible(call.user).filter(pk__in=order), key=lambda e: order[e.pk])
    # Pending items have no vector yet: they match by a word of the query in their name.
    words = {w for w in re.findall(r"\w+", call.data["query"].lower()) if len(w) >= 3}
    return _graph(call.user, entities, pending=lambda name: any(w in name.lower() for w in words))


def open_nodes(call: Call) -> dict[str, Any]:
    entities = [e for name in call.data["names"] if (e := _find(call.user, name)) is not None]
    names = {name.lower() for name in call.data["names"]}
    unique = list({e.pk: e for e in entities}.values())
    return _graph(call.user, unique, pending=lambda name: name.lower() in names)


def _drop_in(name: str, description: str, **kwargs: Any) -> None:
    register(Tool(name=name, description=description, drop_in=True, **kwargs))


_WRITES = (
    " A non-moderator's items are staged for the moderators (status pending); your reads show"
    " them marked pending (observations under pendingObservations)."
)
_drop_in("create_entities", "Create entities with observations." + _WRITES,
         input=CreateEntities, output=RESULTS, run=create_entities, idempotent=True)  # fmt: skip
_drop_in("create_relations", "Create relations (from, to, relationType) between entities." + _WRITES,
         input=CreateRelations, output=RESULTS, run=create_relations, idempotent=True)  # fmt: skip
_drop_in("add_observations", "Add observations to existing entities." + _WRITES,
         input=AddObservations, output=RESULTS, run=add_observations, idempotent=True)  # fmt: skip
_drop_in("delete_entities", "Delete entities and their relations (moderators).",
         input=DeleteEntities, output=RESULTS, run=delete_entities, destructive=True)  # fmt: skip
_drop_in("delete_observations", "Delete observations of entities (moderators).",
         input=DeleteObservations, output=RESULTS, run=delete_observations, destructive=True)  # fmt: skip
_drop_in("delete_relations", "Delete relations (moderators).",
         input=DeleteRelations, output=RESULTS, run=delete_relations, destructive=True)  # fmt: skip
_drop_in("read_graph", "The knowledge graph a page at a time (limit, cursor = nextCursor); "
         "your own pending items are on the first page, marked pending.",
         input=ReadGraph, output=PAGE, run=read_graph, read_only=True)  # fmt: skip
_drop_in("search_nodes", "Entities semantically nearest to a query (names, types, observations).",
         input=SearchNodes, output=GRAPH, run=search_nodes, read_only=True)  # fmt: skip
_drop_in("open_nodes", "Entities by name, with their observations and the relations among them.",
         input=OpenNodes, output=GRAPH, run=open_nodes, read_only=True)  # fmt: skip
