"""Access bumps of injected memories, batched through Redis.

After a think commits, the memories it used get access_count + 1 and last_accessed. One Celery
task per think cost the request a publish (~1.3 ms of kombu on the web worker's CPU) and the
worker a task (~3.5 ms) for two one-row-set UPDATEs; at 100k entities on 2 cores that was CPU
taken from the requests themselves. With Redis, a think appends its ids to a list (one round
trip) and whichever think finds no flush pending schedules one, ``KG_TOUCH_FLUSH_SECONDS``
later: it applies everything queued meanwhile in one UPDATE per table, so a memory that ten
thinks used gets one new row version, not ten.

Nothing is lost on the way: a flush that fails puts its items back; a scheduled flush that
never runs (a worker killed while holding it) lets its flag expire, and the next think
schedules another. Without Redis (eager Celery: tests, tiny installs) the bump is applied at
commit, in-process.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from datetime import datetime
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.db import connection, transaction

from kg.models import Entity, Observation
from legacymind.celery import app

logger = logging.getLogger("kg.touches")

QUEUE = "legacymind:touches"
FLAG = "legacymind:touches:scheduled"  # set while a flush is scheduled
BATCH = 1000  # items popped per round trip
FLAG_TTL = 60  # seconds: a lost flush blocks scheduling no longer than this


def memories_bump(*, bumps: Mapping[tuple[str, int], tuple[int, datetime]]) -> int:
    """For each (kind, id) -> (uses, last use): access_count + uses and last_accessed = the last
    use (never moved back), in one UPDATE per table. Returns the rows updated."""
    touched = 0
    with connection.cursor() as cursor:
        for kind, model in (("entity", Entity), ("observation", Observation)):
            keys = sorted(key for key in bumps if key[0] == kind)
            if not keys:
                continue
            cursor.execute(
                f"UPDATE {model._meta.db_table} AS t "
                "SET access_count = t.access_count + v.n, "
                "last_accessed = GREATEST(t.last_accessed, v.at) "
                "FROM unnest(%s::bigint[], %s::int[], %s::timestamptz[]) AS v(id, n, at) "
                "WHERE t.id = v.id",
                [[k[1] for k in keys], [bumps[k][0] for k in keys], [bumps[k][1] for k in keys]],
            )
            touched += cursor.rowcount
    return touched


def memories_touch(*, entity_ids: list[int], observation_ids: list[int], at: datetime) -> int:
    """access_count + 1 and last_accessed = at (never moved back) for each memory used."""
    return memories_bump(
        bumps={
            **{("entity", pk): (1, at) for pk in entity_ids},
            **{("observation", pk): (1, at) for pk in observation_ids},
        }
    )


@lru_cache(maxsize=4)
def _client(url: str) -> Any:
    import redis

    # 2 s like the cache's and the broker's (settings), not redis-py's 5: a Redis host that
    # never answers holds a request's after-commit work no longer than the rest does.
    return redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=2)


def redis_client() -> Any | None:
    """The broker's Redis, or None when tasks run eagerly (no Redis configured)."""
    if app.conf.task_always_eager:
        return None
    return _client(app.conf.broker_url)


def touch_later(*, entity_ids: list[int], observation_ids: list[int], at: datetime) -> None:
    """Queue one think's bump (call it after commit)."""
    client = redis_client()
    if client is None:
        memories_touch(entity_ids=entity_ids, observation_ids=observation_ids, at=at)
        return
    item = json.dumps([entity_ids, observation_ids, at.isoformat()])
    pipe = client.pipeline(transaction=False)
    pipe.rpush(QUEUE, item)
    pipe.set(FLAG, 1, nx=True, ex=FLAG_TTL)
    _, scheduled_now = pipe.execute()
    if scheduled_now:
        from kg.tasks import memories_touch_flush_task

        memories_touch_flush_task.apply_async(countdown=settings.KG_TOUCH_FLUSH_SECONDS)


def touches_flush() -> int:
    """Apply every queued bump; returns the number of (memory, think) bumps applied."""
    client = redis_client()
    if client is None:
        return 0
    # Cleared first: a think that queues after this point schedules the next flush itself.
    client.delete(FLAG)
    applied = 0
    while raw := client.lpop(QUEUE, BATCH):
        try:
            applied += _apply(raw)
        except Exception:
            client.rpush(QUEUE, *raw)  # nothing lost: the next flush takes them again
            raise
    return applied


def _apply(raw: Iterable[bytes]) -> int:
    bumps: dict[tuple[str, int], tuple[int, datetime]] = {}
    for blob in raw:
        try:
            entity_ids, observation_ids, at_text = json.loads(blob)
            at = datetime.fromisoformat(at_text)
        except (ValueError, TypeError) as exc:  # not ours, or corrupt: dropping it is all we can
            logger.warning("touches.bad_item error=%s", exc)
            continue
        for kind, ids in (("entity", entity_ids), ("observation", observation_ids)):
            for pk in ids:
                uses, last = bumps.get((kind, int(pk)), (0, at))
                bumps[(kind, int(pk))] = (uses + 1, max(last, at))
    with transaction.atomic(), connection.cursor() as cursor:
        # A popular row locked elsewhere must not hold the worker: fail, requeue, retry later.
        cursor.execute(
            "SELECT set_config('lock_timeout', %s, true)", [f"{settings.KG_TOUCH_LOCK_MS}ms"]
        )
        memories_bump(bumps=bumps)
    return sum(uses for uses, _ in bumps.values())
