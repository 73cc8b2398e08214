"""Access bumps with Redis: thinks queue them, one flush applies them together.

Real Redis (a private server) and, for the round trip, a real Celery worker."""

from __future__ import annotations

import json
import shutil
import socket
import threading
import time

import psycopg
import pytest
import redis
from django.db import connection
from django.utils import timezone

from kg.models import Entity
from kg.services.touches import FLAG, QUEUE, touches_flush
from tests.support.celery_worker import celery_against, worker_and_redis
from tests.support.redis_server import private_redis
from thoughts.models import Thought

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

TEXT = "Notes about the greenhouse watering rota"


@pytest.fixture
def bare_redis():
    """This process's Celery pointed at a private Redis with no worker taking its tasks."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed (make system-deps)")
    with private_redis() as url, celery_against(url):
        yield redis.Redis.from_url(url)


def flushes_queued(client: redis.Redis) -> int:
    """Flush tasks waiting in Celery's queue (thinks queue KG extraction there too)."""
    messages = [json.loads(raw) for raw in client.lrange("celery", 0, -1)]
    return sum(m["headers"]["task"] == "thoughts.memories_touch_flush" for m in messages)


def think(api) -> dict:
    r = api.post(
        "/api/v1/think", {"content": TEXT, "hint": "question", "injection_scale": 1}, format="json"
    )
    assert r.status_code == 201, r.json()
    return r.json()


def test_thinks_queue_their_bumps_and_one_flush_applies_them_together(api, memory, bare_redis):
    used = memory(about=TEXT, cosine=0.8, name="used")
    other = memory(about=TEXT, cosine=0.7, name="other", access_count=5)
    before = timezone.now()
    for _ in range(3):
        assert [m["name"] for m in think(api)["injected"]] == ["used", "other"]
    used.refresh_from_db()
    assert used.access_count == 0  # queued, not applied
    assert bare_redis.llen(QUEUE) == 3
    assert bare_redis.exists(FLAG)
    # Three thinks published one flush task between them, not one task each.
    assert flushes_queued(bare_redis) == 1

    assert touches_flush() == 6
    used.refresh_from_db(), other.refresh_from_db()
    assert used.access_count == 3 and used.last_accessed >= before
    assert other.access_count == 8
    assert bare_redis.llen(QUEUE) == 0 and not bare_redis.exists(FLAG)
    # The next think after a flush schedules the next flush.
    think(api)
    assert flushes_queued(bare_redis) == 2


def test_a_flush_that_meets_a_locked_row_keeps_the_bumps_queued(api, memory, bare_redis, settings):
    settings.KG_TOUCH_LOCK_MS = 200
    used = memory(about=TEXT, cosine=0.8, name="used")
    think(api), think(api)
    db = connection.settings_dict
    holder = psycopg.connect(host=db["HOST"], user=db["USER"], dbname=db["NAME"])
    holder.execute("SELECT 1 FROM kg_entity WHERE id = %s FOR UPDATE", [used.id])
    try:
        with pytest.raises(Exception, match="lock timeout"):
            touches_flush()
        assert bare_redis.llen(QUEUE) == 2  # put back, nothing lost
    finally:
        holder.rollback()
        holder.close()
    assert touches_flush() == 2
    used.refresh_from_db()
    assert used.access_count == 2  # applied once, not twice


def test_a_corrupt_item_is_dropped_and_the_rest_applied(api, memory, bare_redis):
    used = memory(about=TEXT, cosine=0.8, name="used")
    think(api)
    bare_redis.rpush(QUEUE, b"not json")
    think(api)
    assert touches_flush() == 2
    used.refresh_from_db()
    assert used.access_count == 2
    assert bare_redis.llen(QUEUE) == 0


def test_the_worker_applies_the_queued_bumps(api, memory, settings):
    settings.KG_TOUCH_FLUSH_SECONDS = 0.5
    used = memory(about=TEXT, cosine=0.8, name="used")
    with worker_and_redis() as worker:
        for _ in range(4):
            think(api)
        deadline = time.monotonic() + 60
        while Entity.objects.get(id=used.id).access_count < 4 and time.monotonic() < deadline:
            assert worker.poll() is None, worker.stderr.read().decode()[-2000:]  # type: ignore[union-attr]
            time.sleep(0.2)
        time.sleep(1.0)  # a second flush, if any, would have run by now
        assert Entity.objects.get(id=used.id).access_count == 4


def test_concurrent_thinks_lose_no_bump(api, memory, bare_redis):
    used = memory(about=TEXT, cosine=0.8, name="used")
    errors: list[BaseException] = []

    def many() -> None:
        try:
            from rest_framework.test import APIClient

            client = APIClient()
            client.credentials(**api._credentials)
            for _ in range(5):
                think(client)
        except BaseException as exc:  # surfaced below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=many) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert touches_flush() == 15
    used.refresh_from_db()
    assert used.access_count == 15


def test_a_broker_outage_after_commit_keeps_the_thought_and_answers_201(api, memory, caplog):
    used = memory(about=TEXT, cosine=0.8, name="used")
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with celery_against(f"redis://127.0.0.1:{port}/0"):
        r = api.post(
            "/api/v1/think",
            {"content": TEXT, "hint": "question", "injection_scale": 1},
            format="json",
        )
    # The thought is committed before anything is published: a 500 now would make the client
    # retry and store it twice. The lost bump and extraction are logged instead.
    assert r.status_code == 201, r.content
    assert Thought.objects.filter(content=TEXT).count() == 1
    lost = [r.getMessage() for r in caplog.records if r.name == "legacymind.tasks"]
    assert any(
        "not queued after commit: thoughts.services.write._touch_on_commit" in m for m in lost
    )
    assert any("not queued after commit: kg.thought_extract" in m for m in lost)
    used.refresh_from_db()
    assert used.access_count == 0


def test_a_redis_that_never_answers_fails_the_bump_within_the_projects_2_s():
    """A host that accepts and then never answers (a dead peer behind a firewall) holds a
    request's after-commit work for the project's 2 s Redis timeout (redis-py's own is 5 s)."""
    from kg.services.touches import _client

    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen()
    held: list[socket.socket] = []
    threading.Thread(target=lambda: held.append(silent.accept()[0]), daemon=True).start()
    started = time.monotonic()
    try:
        with pytest.raises(redis.exceptions.TimeoutError):
            _client(f"redis://127.0.0.1:{silent.getsockname()[1]}/0").rpush(QUEUE, "x")
        assert time.monotonic() - started < 4
    finally:
        for conn in held:
            conn.close()
        silent.close()
