"""The Celery app. Without REDIS_URL tasks run eagerly in-process (see settings)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from celery import Celery
from celery.signals import task_postrun, task_prerun

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "legacymind.settings")

app = Celery("legacymind")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.task(name="legacymind.ping")
def ping(value: str) -> str:
    """Round-trip probe used by the health check of the worker path."""
    return f"pong:{value}"


@app.task(name="legacymind.db_ping")
def db_ping() -> int:
    """The worker's database connection: its server process id. Two calls answered with the
    same id went through one reused connection."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return int(cursor.fetchone()[0])


@task_prerun.connect
@task_postrun.connect
def _close_old_connections(task: Any = None, **kwargs: Any) -> None:
    # Django's per-request rule (CONN_MAX_AGE, health checks) around every task; see
    # CELERY_DB_REUSE_MAX in settings. Never for eager tasks: they run inside the caller's
    # request or transaction, whose connection is not ours to close.
    if task is not None and getattr(task.request, "is_eager", False):
        return
    from django.db import close_old_connections

    close_old_connections()


def publish_on_commit(publish: Callable[[], Any]) -> None:
    """Run ``publish`` (queue a task, push to Redis) once the current transaction commits.

    With a broker, a failure there is logged, not raised: the row is already committed, and a
    500 for it would make a client retry and store it twice. Eager tasks run in-process and
    raise like any code, so tests see their errors."""
    from django.db import transaction

    transaction.on_commit(publish, robust=not app.conf.task_always_eager)
