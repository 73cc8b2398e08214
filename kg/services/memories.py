"""Writing the graph directly (the original's ``memories_create``), with its upsert keys:
entity name+entity_type, relationship source+target+rel_type, observation name+source thought.
Embeddings are computed after commit by a Celery task."""

from __future__ import annotations

import logging
from typing import Any, TypeVar

import numpy as np
from django.db import transaction
from django.utils import timezone

from kg.identity import clean
from kg.models import Edge, Entity, Observation
from kg.selectors.visibility import memories_visible_to
from legacymind.celery import publish_on_commit
from legacymind.errors import Conflict, ServiceError
from legacymind.providers.embeddings import (
    EmbeddingError,
    EmbeddingProvider,
    fields_for,
    get_provider,
)
from legacymind.users import Viewer

_Memory = TypeVar("_Memory", Entity, Observation, Edge)

logger = logging.getLogger("kg.services")


def memory_visible(row: _Memory, viewer: Viewer) -> bool:
    """Whether ``viewer`` may see this entity, observation or edge (``memories_visible_to``)."""
    return memories_visible_to(viewer, type(row)).filter(pk=row.pk).exists()


def _name_taken(what: str, other: str) -> Conflict:
    """The natural key is unique across every user, so a row the writer cannot see still
    blocks the write; the answer says only that, never which row (no id, source or update)."""
    return Conflict(
        f"{what} cannot be written: the name is already in use; choose another name or {other}"
    )


def entity_embed_on_commit(*, entity_id: int) -> None:
    from kg.tasks import entity_embed

    publish_on_commit(lambda: entity_embed.delay(entity_id))


def observation_embed_on_commit(*, observation_id: int) -> None:
    from kg.tasks import observation_embed

    publish_on_commit(lambda: observation_embed.delay(observation_id))


def entity_embed(*, entity_id: int) -> bool:
    """Embed "name (entity_type)"; False when the entity is gone."""
    entity = Entity.objects.filter(id=entity_id).first()
    if entity is None:
        return False
    provider = get_provider()
    vector = provider.embed([entity.embedding_text()])[0]
    for key, value in fields_for(provider, vector).items():
        setattr(entity, key, value)
    entity.save(update_fields=[*fields_for(provider, vector).keys(), "updated_at"])
    return True


def observation_embed(*, observation_id: int) -> bool:
    obs = Observation.objects.filter(id=observation_id).first()
    if obs is None:
        return False
    provider = get_provider()
    fields = fields_for(provider, provider.embed([obs.embedding_text()])[0])
    for key, value in fields.items():
        setattr(obs, key, value)
    obs.save(update_fields=[*fields.keys(), "updated_at"])
    return True


@transaction.atomic
def entity_upsert(
    *,
    name: str,
    entity_type: str = "concept",
    description: str = "",
    data: dict[str, Any] | None = None,
    aliases: list[str] | None = None,
    source_thought_id: Any = None,
    upsert: bool = True,
    viewer: Viewer,
) -> tuple[Entity, bool]:
    """Create the entity, or update the one with the same name and type. Returns (entity,
    created); with ``upsert=False`` an existing one is a conflict, and so is one ``viewer``
    cannot see."""
    name, entity_type = clean(name), clean(entity_type).lower() or "concept"
    entity = (
        Entity.objects.select_for_update()
        .filter(name__iexact=name, entity_type__iexact=entity_type)
        .first()
    )
    if entity is not None and not memory_visible(entity, viewer):
        raise _name_taken(f"entity {name!r} ({entity_type})", "entity_type")
    if entity is not None and not upsert:
        raise Conflict(f"entity {name!r} ({entity_type}) already exists", fields={"id": entity.pk})
    if entity is None:
        entity = Entity.objects.create(
            name=name,
            entity_type=entity_type,
            description=description,
            data=data or {},
            aliases=aliases or [],
            source_thought_id=source_thought_id,
        )
        entity_embed_on_commit(entity_id=entity.pk)
        return entity, True
    entity.description = description or entity.description
    entity.data = {**entity.data, **(data or {})}
    entity.aliases = list(dict.fromkeys([*entity.aliases, *(aliases or [])]))
    entity.save(update_fields=["description", "data", "aliases", "updated_at"])
    return entity, False


def entity_clash(*, name: str, entity_type: str, entity_id: int | None = None) -> Conflict | None:
    """The conflict of naming an entity (``entity_id``, or a new one) ``name`` (``entity_type``)
    when another entity has those words already, or None. Names are compared cleaned and without
    case. The message names the requested words, not the stored row's: the clash may be a memory
    hidden from the writer."""
    name, entity_type = clean(name), clean(entity_type).lower()
    clash = Entity.objects.filter(name__iexact=name, entity_type__iexact=entity_type)
    if entity_id is not None:
        clash = clash.exclude(id=entity_id)
    if clash.exists():
        return Conflict(f"entity {name!r} ({entity_type}) already exists")
    return None


@transaction.atomic
def entity_update(*, entity: Entity, **changes: Any) -> Entity:
    """Change an entity's fields; a new name or type is cleaned, must not clash with another
    entity's, and re-embeds the entity after commit."""
    renamed = any(k in changes for k in ("name", "entity_type"))
    if "name" in changes:
        changes["name"] = clean(changes["name"])
    if "entity_type" in changes:
        changes["entity_type"] = clean(changes["entity_type"]).lower()
    if renamed:
        clash = entity_clash(
            name=changes.get("name", entity.name),
            entity_type=changes.get("entity_type", entity.entity_type),
            entity_id=entity.pk,
        )
        if clash is not None:
            raise clash
    for key, value in changes.items():
        setattr(entity, key, value)
    entity.save(update_fields=[*changes.keys(), "updated_at"])
    if renamed:
        entity_embed_on_commit(entity_id=entity.pk)
    return entity


@transaction.atomic
def observation_upsert(
    *,
    name: str,
    description: str = "",
    data: dict[str, Any] | None = None,
    entity_id: int | None = None,
    source_thought_id: Any = None,
    confidence: float = 1.0,
    upsert: bool = True,
    viewer: Viewer,
) -> tuple[Observation, bool]:
    """Create the observation, or update the one with the same name and source thought; one
    ``viewer`` cannot see is a conflict."""
    name = clean(name)
    obs = (
        Observation.objects.select_for_update()
        .filter(name=name, source_thought_id=source_thought_id)
        .first()
    )
    if obs is not None and not memory_visible(obs, viewer):
        raise _name_taken(f"observation {name!r}", "source_thought_id")
    if obs is not None and not upsert:
        raise Conflict(f"observation {name!r} already exists", fields={"id": obs.pk})
    if obs is None:
        obs = Observation.objects.create(
            name=name,
            description=description,
            data=data or {},
            entity_id=entity_id,
            source_thought_id=source_thought_id,
            confidence=confidence,
        )
        observation_embed_on_commit(observation_id=obs.pk)
        return obs, True
    obs.description = description or obs.description
    obs.data = {**obs.data, **(data or {})}
    obs.entity_id = entity_id or obs.entity_id
    obs.confidence = confidence
    obs.save(update_fields=["description", "data", "entity_id", "confidence", "updated_at"])
    observation_embed_on_commit(observation_id=obs.pk)
    return obs, False


@transaction.atomic
def observation_update(*, observation: Observation, **changes: Any) -> Observation:
    if "name" in changes:
        changes["name"] = clean(changes["name"])
        clash = (
            Observation.objects.filter(
                name=changes["name"], source_thought_id=observation.source_thought_id
            )
            .exclude(id=observation.pk)
            .exists()
        )
        if clash:
            raise Conflict(f"observation {changes['name']!r} already exists for this thought")
    for key, value in changes.items():
        setattr(observation, key, value)
    observation.save(update_fields=[*changes.keys(), "updated_at"])
    if {"name", "description"} & changes.keys():
        observation_embed_on_commit(observation_id=observation.pk)
    return observation


@transaction.atomic
def edge_update(*, edge: Edge, **changes: Any) -> Edge:
    if "rel_type" in changes:
        changes["rel_type"] = clean(changes["rel_type"]).lower().replace(" ", "_")
        clash = (
            Edge.objects.filter(
                source_id=edge.source_id, target_id=edge.target_id, rel_type=changes["rel_type"]
            )
            .exclude(id=edge.pk)
            .exists()
        )
        if clash:
            raise Conflict("this relationship already exists")
    for key, value in changes.items():
        setattr(edge, key, value)
    edge.save(update_fields=list(changes.keys()))
    return edge


@transaction.atomic
def edge_upsert(
    *,
    source_id: int,
    target_id: int,
    rel_type: str,
    data: dict[str, Any] | None = None,
    confidence: float = 1.0,
    source_thought_id: Any = None,
    upsert: bool = True,
    viewer: Viewer,
) -> tuple[Edge, bool]:
    """Create the edge, or update the one with the same source, target and relation; one
    ``viewer`` cannot see is a conflict."""
    if source_id == target_id:
        # Nothing in the specs relates an entity to itself, and a loop only adds noise to
        # neighbours and injection.
        raise ServiceError(
            "An edge joins two different entities.",
            fields={
                "target_id": ["An edge joins two different entities; target_id equals source_id."]
            },
        )
    rel_type = clean(rel_type).lower().replace(" ", "_")
    edge = (
        Edge.objects.select_for_update()
        .filter(source_id=source_id, target_id=target_id, rel_type=rel_type)
        .first()
    )
    if edge is not None and not memory_visible(edge, viewer):
        raise Conflict("this relationship cannot be written: it is already in use")
    if edge is not None and not upsert:
        raise Conflict("this relationship already exists", fields={"id": edge.pk})
    if edge is None:
        edge = Edge.objects.create(
            source_id=source_id,
            target_id=target_id,
            rel_type=rel_type,
            data=data or {},
            confidence=confidence,
            source_thought_id=source_thought_id,
        )
        return edge, True
    edge.data = {**edge.data, **(data or {})}
    edge.confidence = confidence
    edge.save(update_fields=["data", "confidence"])
    return edge, False


def memories_backfill(*, provider: EmbeddingProvider, ids: dict[str, list[int]]) -> int:
    """Embed (and save) the KG rows ``ids`` (by kind) that still have no vector, so the index
    can find them. A provider failure is logged, not raised: the thought itself is already
    embedded."""
    if not any(ids.values()):
        return 0
    rows: list[Any] = [
        *Entity.objects.filter(id__in=ids.get("entity", []), embedding_dim__isnull=True),
        *Observation.objects.filter(id__in=ids.get("observation", []), embedding_dim__isnull=True),
    ]
    if not rows:  # embedded meanwhile (the after-commit task, another think)
        return 0
    try:
        vectors: np.ndarray = provider.embed([row.embedding_text() for row in rows])
    except EmbeddingError as exc:
        logger.warning("kg.backfill_failed rows=%d error=%s", len(rows), exc)
        return 0
    now = timezone.now()
    names: list[str] = []
    for row, vector in zip(rows, vectors, strict=True):
        fields = fields_for(provider, vector)
        for key, value in fields.items():
            setattr(row, key, value)
        row.updated_at = now
        names = [*fields.keys(), "updated_at"]
    Entity.objects.bulk_update([r for r in rows if isinstance(r, Entity)], names)
    Observation.objects.bulk_update([r for r in rows if isinstance(r, Observation)], names)
    return len(rows)
