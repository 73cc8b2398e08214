"""A Celery worker keeps its database connection between tasks as DB_CONN_MAX_AGE says.

Celery's Django fixup would otherwise close it before and after every task, and a new
connection per task was most of the cost of an access bump (settings, CELERY_DB_REUSE_MAX)."""

from __future__ import annotations

import pytest

from legacymind.celery import app
from tests.support.celery_worker import worker_and_redis


def _backend_pids(calls: int) -> list[int]:
    return [app.send_task("legacymind.db_ping").get(timeout=60) for _ in range(calls)]


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("conn_max_age", "connections"),
    [("60", 1), ("0", 3)],
    ids=["reused-with-conn-max-age", "one-per-task-with-zero"],
)
def test_worker_connections_follow_conn_max_age(conn_max_age, connections):
    with worker_and_redis(DB_CONN_MAX_AGE=conn_max_age):
        pids = _backend_pids(3)
    assert len(set(pids)) == connections, pids
