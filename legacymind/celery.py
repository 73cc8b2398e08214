"""The Celery app. Without REDIS_URL tasks run eagerly in-process (see settings)."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from celery import Celery
from celery.signals import before_task_publish, task_postrun, task_prerun

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "legacymind.settings")

app = Celery("legacymind")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

logger = logging.getLogger("legacymind.tasks")


# Results are off by default (CELERY_TASK_IGNORE_RESULT); these two exist to be answered.
@app.task(name="legacymind.ping", ignore_result=False)
def ping(value: str) -> str:
    """Round-trip probe used by the health check of the worker path."""
    return f"pong:{value}"


@app.task(name="legacymind.db_ping", ignore_result=False)
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


# The tasks an on-commit callable queued (or ran, eagerly), so its log line can name them.
_sent: ContextVar[list[str] | None] = ContextVar("legacymind_sent_tasks", default=None)


@before_task_publish.connect
def _note_published(sender: str | None = None, **kwargs: Any) -> None:
    sent = _sent.get()
    if sent is not None and sender:
        sent.append(sender)


@task_prerun.connect
def _note_eager(task: Any = None, **kwargs: Any) -> None:
    sent = _sent.get()
    if sent is not None and task is not None and getattr(task.request, "is_eager", False):
        sent.append(task.name)


@dataclass
class Publication:
    """What became of a ``publish_on_commit``: ``sent`` is None until the transaction commits,
    then whether ``publish`` went through (False: the broker was down, or an eager task
    raised)."""

    sent: bool | None = None
    eager: bool = False  # the task ran in this process (no worker): sent means it ran


def publish_on_commit(publish: Callable[[], Any]) -> Publication:
    """Run ``publish`` (queue a task, push to Redis) once the current transaction commits.

    A failure there is logged, not raised: the row is already committed, and a 500 for it
    would make a client retry and store it twice. With a broker that is down, one WARNING
    names what was not queued (no traceback, no arguments: they may be user text); an eager
    task that raises is an ERROR with its traceback, as a worker would log it."""
    from django.db import transaction

    outcome = Publication()
    transaction.on_commit(lambda: _publish(publish, outcome))
    return outcome


def _publish(publish: Callable[[], Any], outcome: Publication) -> None:
    import redis
    from kombu.exceptions import OperationalError

    sent: list[str] = []
    token = _sent.set(sent)
    outcome.sent, outcome.eager = False, bool(app.conf.task_always_eager)
    try:
        publish()
        outcome.sent = True
    except (OperationalError, redis.ConnectionError, redis.TimeoutError) as exc:
        if app.conf.task_always_eager:  # raised by the task's own code: a bug to see in full
            logger.exception("task %s failed after commit", _what(sent, publish))
        else:
            logger.warning("not queued after commit: %s (%s)", _what(sent, publish), exc)
    except Exception:
        logger.exception("task %s failed after commit", _what(sent, publish))
    finally:
        _sent.reset(token)


def _what(sent: list[str], publish: Callable[[], Any]) -> str:
    if sent:
        return sent[0]
    # A push to Redis rather than a task (thoughts.think.touches): name the function that
    # asked for it, e.g. thoughts.think.persist._touch_on_commit.
    where = str(getattr(publish, "__qualname__", publish)).split(".<locals>")[0]
    return f"{getattr(publish, '__module__', '?')}.{where}"
