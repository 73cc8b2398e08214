"""A real Celery worker process against a private Redis, for the worker-path tests."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import pytest
from django.conf import settings

from legacymind.celery import app
from tests.support.redis_server import private_redis

ROOT = Path(__file__).resolve().parents[2]


def worker_database_url() -> str:
    """The test database as a DATABASE_URL the worker process can open (Unix socket)."""
    db = settings.DATABASES["default"]
    return (
        f"postgres://{quote(db['USER'])}:{quote(db['PASSWORD'] or '')}@/{db['NAME']}"
        f"?host={quote(db['HOST'])}"
    )


@contextmanager
def celery_against(url: str) -> Iterator[None]:
    """Point this process's Celery app at ``url`` (settings chose eager mode at start-up)."""
    saved = {k: app.conf[k] for k in ("broker_url", "result_backend", "task_always_eager")}
    app.conf.update(broker_url=url, result_backend=url, task_always_eager=False)
    _forget_connections()
    try:
        yield
    finally:
        app.conf.update(**saved)
        _forget_connections()


def _forget_connections() -> None:
    # The producer pools and the result backend bind to the URLs they first saw.
    app._pool = None
    app.amqp._producer_pool = None
    app._backend_cache = None
    app._local.__dict__.pop("backend", None)


@contextmanager
def worker_and_redis(**env: str) -> Iterator[subprocess.Popen[bytes]]:
    """A private redis-server, a ``celery worker`` on the test database with ``env`` added,
    and this process's Celery app pointed at that Redis; the worker's stderr is piped so a
    failing test can show it."""
    with redis_for_celery() as url, celery_worker(url, **env) as worker:
        yield worker


@contextmanager
def redis_for_celery() -> Iterator[str]:
    """A private redis-server with this process's Celery app pointed at it, and no worker yet
    (what is queued meanwhile waits): its URL, for :func:`celery_worker`."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed (make system-deps)")
    with private_redis() as url, celery_against(url):
        yield url


@contextmanager
def celery_worker(url: str, **env: str) -> Iterator[subprocess.Popen[bytes]]:
    """A ``celery worker`` process on the test database and the Redis at ``url``, with ``env``
    added; stopped on the way out."""
    worker_env = {
        **os.environ,
        "REDIS_URL": url,
        "DATABASE_URL": worker_database_url(),
        "DJANGO_SECRET_KEY": "x",
        "EMBEDDING_PROVIDER": "hash",
        **env,
    }
    worker_env.pop("GROK_API_KEY", None)  # nothing in a worker reaches a real model
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "legacymind", "worker", "--pool=solo",
         "--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "WARNING"],
        cwd=ROOT, env=worker_env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        yield worker
    finally:
        worker.terminate()
        worker.wait(15)
