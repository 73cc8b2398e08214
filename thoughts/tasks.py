"""Celery tasks of the thoughts app. They take ids and call services."""

from __future__ import annotations

from datetime import datetime

from celery import shared_task

from thoughts.think.persist import memories_touch


@shared_task(name="thoughts.memories_touch")
def memories_touch_task(entity_ids: list[int], observation_ids: list[int], at: str) -> int:
    return memories_touch(
        entity_ids=entity_ids, observation_ids=observation_ids, at=datetime.fromisoformat(at)
    )
