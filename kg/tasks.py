"""Celery tasks of the knowledge graph. They take ids and call services."""

from __future__ import annotations

from datetime import datetime

from celery import shared_task

from kg import services
from kg.services.touches import memories_touch, touches_flush


@shared_task(name="kg.entity_embed")
def entity_embed(entity_id: int) -> bool:
    return services.entity_embed(entity_id=entity_id)


@shared_task(name="kg.observation_embed")
def observation_embed(observation_id: int) -> bool:
    return services.observation_embed(observation_id=observation_id)


# Nobody reads the counts these return: storing them in the result backend (and, with Redis,
# subscribing at publish time) would cost every think a little for nothing. The names predate
# the move of access counts into this app; they stay, being what queued messages carry.
@shared_task(name="thoughts.memories_touch_flush", ignore_result=True)
def memories_touch_flush_task() -> int:
    """Apply the access bumps queued by thinks since the last flush (``services.touches``)."""
    return touches_flush()


# One think's bump as its own task: how thinks queued it before the batched flush. Kept so that
# messages already in a queue when a deployment upgrades are still applied.
@shared_task(name="thoughts.memories_touch", ignore_result=True)
def memories_touch_task(entity_ids: list[int], observation_ids: list[int], at: str) -> int:
    return memories_touch(
        entity_ids=entity_ids, observation_ids=observation_ids, at=datetime.fromisoformat(at)
    )
