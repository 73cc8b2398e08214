"""Celery tasks of the thoughts app. They take ids and call services."""

from __future__ import annotations

from datetime import datetime

from celery import shared_task

from thoughts.think.persist import memories_touch
from thoughts.think.touches import touches_flush


# Nobody reads the counts these return: storing them in the result backend (and, with Redis,
# subscribing at publish time) would cost every think a little for nothing.
@shared_task(name="thoughts.memories_touch_flush", ignore_result=True)
def memories_touch_flush_task() -> int:
    """Apply the access bumps queued by thinks since the last flush (``think.touches``)."""
    return touches_flush()


# One think's bump as its own task: how thinks queued it before the batched flush. Kept so that
# messages already in a queue when a deployment upgrades are still applied.
@shared_task(name="thoughts.memories_touch", ignore_result=True)
def memories_touch_task(entity_ids: list[int], observation_ids: list[int], at: str) -> int:
    return memories_touch(
        entity_ids=entity_ids, observation_ids=observation_ids, at=datetime.fromisoformat(at)
    )
