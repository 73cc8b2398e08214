"""The on-commit extraction through a real Celery worker and a real Redis."""

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

from kg.models import EdgeCandidate
from kg.services import thought_extract_on_commit
from legacymind.celery import app
from tests.kg.factories import ThoughtFactory

ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def private_redis() -> Iterator[str]:
    """A redis-server of our own: a shared one could hand our task to someone else's worker."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    workdir = tempfile.mkdtemp(prefix="kg-redis-")
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


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_committed_thought_is_extracted_by_the_worker():
    db = settings.DATABASES["default"]
    database_url = (
        f"postgres://{quote(db['USER'])}:{quote(db['PASSWORD'] or '')}@/{db['NAME']}"
        f"?host={quote(db['HOST'])}"
    )
    saved = {k: app.conf[k] for k in ("broker_url", "result_backend", "task_always_eager")}
    with private_redis() as url:
        env = {
            **os.environ,
            "REDIS_URL": url,
            "DATABASE_URL": database_url,
            "DJANGO_SECRET_KEY": "x",
            "EMBEDDING_PROVIDER": "hash",
            "IV_CLI_CMD": "/bin/false",
        }
        env.pop("GROK_API_KEY", None)
        worker = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "legacymind", "worker", "--pool=solo",
             "--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "WARNING"],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip
        app.conf.update(broker_url=url, result_backend=url, task_always_eager=False)
        # The producer pools bind to the broker they first saw.
        app._pool = None
        app.amqp._producer_pool = None
        try:
            thought = ThoughtFactory(content="cart-service -> session-store", origin="journal")
            assert thought_extract_on_commit(thought_id=thought.id)  # autocommit: sent now
            deadline = time.monotonic() + 60
            while not EdgeCandidate.objects.exists():
                assert worker.poll() is None, worker.stderr.read().decode()[-2000:]
                assert time.monotonic() < deadline, "the worker did not stage the thought"
                time.sleep(0.2)
            edge = EdgeCandidate.objects.get()
            assert (edge.source_name, edge.target_name) == ("cart-service", "session-store")
            assert edge.staged_by_thought_id == thought.id and edge.origin == "journal"
        finally:
            app.conf.update(**saved)
            app._pool = None
            app.amqp._producer_pool = None
            worker.terminate()
            worker.wait(15)


@pytest.mark.django_db(transaction=True)
def test_moderators_group_survives_a_flush():
    from django.contrib.auth.models import Group
    from django.core.management import call_command

    call_command("flush", interactive=False, verbosity=0)
    group = Group.objects.get(name="KG moderators")
    assert group.permissions.filter(codename="moderate", content_type__app_label="kg").exists()
