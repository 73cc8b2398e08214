"""The drop-in writes: create entities, relations and observations (direct, or staged for the
moderators through ``mcpserver.kgwrites``) and delete them (moderators)."""

from __future__ import annotations

from functools import partial
from typing import Any

from django.contrib.auth.models import User

from kg import selectors, services
from kg.models import Entity, Observation
from mcpserver.kgwrites import may_moderate, retrying, stage, staged_origin, writes_direct
from mcpserver.registry import Call
from mcpserver.tools.memory_server.common import (
    NOT_YOURS,
    STAGED,
    find,
    observation_name,
)


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
    entity = find(user, entity_name)
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
        entity = find(user, name)
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
        source, target = find(user, item["from"]), find(user, item["to"])
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
        entity = find(call.user, name)
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
        entity = find(call.user, item["entityName"])
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
        source, target = find(call.user, item["from"]), find(call.user, item["to"])
        if not may_moderate(call.user):
            results.append({**item, "status": NOT_YOURS})
            continue
        edges = selectors.visible_edges(call.user).filter(
            source=source, target=target, rel_type=item["relationType"]
        )
        deleted, _ = edges.delete() if source and target else (0, {})
        results.append({**item, "status": "deleted" if deleted else "not_found"})
    return {"results": results}
