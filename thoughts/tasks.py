"""Celery tasks of the thoughts app. They take ids and call services."""

from __future__ import annotations

import logging

from celery import shared_task

from legacymind.errors import NotFound
from thoughts import services

logger = logging.getLogger("thoughts.tasks")


# Named for the KG it feeds: the name is what queued messages carry.
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
