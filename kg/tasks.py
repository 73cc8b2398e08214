"""Celery tasks of the knowledge graph. They take ids and call services."""

from __future__ import annotations

import logging

from celery import shared_task

from kg import services
from legacymind.errors import NotFound

logger = logging.getLogger("kg.tasks")


@shared_task(name="kg.entity_embed")
def entity_embed(entity_id: int) -> bool:
    return services.entity_embed(entity_id=entity_id)


@shared_task(name="kg.observation_embed")
def observation_embed(observation_id: int) -> bool:
    return services.observation_embed(observation_id=observation_id)


@shared_task(name="kg.thought_extract")
def thought_extract_task(thought_id: str, origin: str | None = None) -> dict[str, object]:
    try:
        result, staged = services.thought_extract(thought_id=thought_id, origin=origin)
    except NotFound:
        # Deleted by its owner after the extraction was queued: nothing to do, not a failure.
        logger.info("thought %s was deleted before its extraction ran", thought_id)
        return {"deleted": True}
    return {
        "provider": result.provider,
        "entities": len(result.entities),
        "edges": len(result.edges),
        "staged_entities": staged.entities,
        "staged_edges": staged.edges,
    }
