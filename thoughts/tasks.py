"""Celery tasks of the thoughts app. They take ids and call services."""

from __future__ import annotations

from datetime import datetime

from celery import shared_task

from thoughts.think.persist import memories_touch


# Nobody reads the count it returns: storing it in the result backend (and, with Redis,
# subscribing to it at publish time) would cost every think a little for nothing.
@shared_task(name="thoughts.memories_touch", ignore_result=True)
def memories_touch_task(entity_ids: list[int], observation_ids: list[int], at: str) -> int:
    return memories_touch(
        entity_ids=entity_ids, observation_ids=observation_ids, at=datetime.fromisoformat(at)
    )
