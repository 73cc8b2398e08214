"""The worker path: a real Celery worker process and a real Redis answer ``legacymind.ping``."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import pytest
from django.conf import settings

from legacymind.celery import app

ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def private_redis() -> Iterator[str]:
    """A redis-server of our own: on a shared one, another test's worker could take our task."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (make system-deps)")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    workdir = tempfile.mkdtemp(prefix="lm-redis-")
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", workdir],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                assert time.monotonic() < deadline and proc.poll() is None, "no redis-server"
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(5)
        shutil.rmtree(workdir, ignore_errors=True)


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


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_ping_round_trips_through_a_real_worker_and_redis():
    db = settings.DATABASES["default"]
    database_url = (
        f"postgres://{quote(db['USER'])}:{quote(db['PASSWORD'] or '')}@/{db['NAME']}"
        f"?host={quote(db['HOST'])}"
    )
    with private_redis() as url:
        env = {
            **os.environ,
            "REDIS_URL": url,
            "DATABASE_URL": database_url,
            "DJANGO_SECRET_KEY": "x",
            "EMBEDDING_PROVIDER": "hash",
        }
        worker = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "legacymind", "worker", "--pool=solo",
             "--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "WARNING"],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip
        try:
            with celery_against(url):
                result = app.send_task("legacymind.ping", args=["ops-check"])
                try:
                    answer = result.get(timeout=60)
                except Exception:
                    worker.terminate()
                    pytest.fail(
                        f"no answer from the worker: {worker.stderr.read().decode()[-2000:]}"
                    )  # type: ignore[union-attr]
                assert answer == "pong:ops-check"
                assert result.successful()
                # The answer came from another process: nothing ran eagerly in this one.
                assert app.conf.task_always_eager is False
        finally:
            worker.terminate()
            worker.wait(15)
    assert worker.returncode is not None
