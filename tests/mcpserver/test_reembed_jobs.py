"""maintenance_ops with background: a reembed queued over Streamable HTTP, run by a real Celery
worker against a real Redis, and followed with job_status until it is done."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import psycopg
import pytest
from django.conf import settings
from mcp import Client
from rest_framework.authtoken.models import Token

from kg.models import Entity, Observation
from legacymind.providers.embeddings import get_provider
from legacymind.vectors.reembed import embedded_tables
from tests.mcpserver.conftest import with_http_client
from tests.support.celery_worker import worker_and_redis

pytestmark = pytest.mark.django_db(transaction=True)

TOOL = "maintenance_ops"


def _key(user) -> str:
    return Token.objects.get_or_create(user=user)[0].key


def _staff(user):
    user.is_staff = True
    user.save(update_fields=["is_staff"])
    return user


def _call(url: str, key: str, arguments: dict[str, Any]) -> Any:
    async def session(client: Client):
        return await client.call_tool(TOOL, arguments)

    return with_http_client(url, key, session)


def _poll(url: str, key: str, job_id: str, until, worker, seconds: float = 60) -> list[dict]:
    """job_status over one HTTP session until ``until(answer)``; every answer seen, in order."""

    async def session(client: Client) -> list[dict]:
        seen: list[dict] = []
        deadline = time.monotonic() + seconds
        while True:
            result = await client.call_tool(TOOL, {"operation": "job_status", "job_id": job_id})
            assert not result.is_error, result.content[0].text
            seen.append(result.structured_content)
            if until(seen[-1]):
                return seen
            assert worker.poll() is None, "the worker died"
            assert time.monotonic() < deadline, f"no such status in time; last: {seen[-1]}"
            await asyncio.sleep(0.1)

    return with_http_client(url, key, session)


def _row_locked(model, pk):
    """A transaction of another connection holding ``pk``'s row lock: the worker's write of
    that row waits on it, so the job stays running at a known point until it is closed."""
    db = settings.DATABASES["default"]
    conn = psycopg.connect(
        dbname=db["NAME"], user=db["USER"], password=db["PASSWORD"] or None, host=db["HOST"],
        port=db["PORT"] or None,
    )  # fmt: skip
    conn.execute(f"SELECT 1 FROM {model._meta.db_table} WHERE id = %s FOR UPDATE", [pk])
    return conn


@pytest.mark.worker
def test_a_background_reembed_over_http_reports_progress_and_ends_with_its_summary(
    live_server, user
):
    url, key = f"{live_server.url}/mcp", _key(_staff(user))
    first, second = (t.model for t in embedded_tables("kg"))
    assert {first, second} == {Entity, Observation}
    entity = Entity.objects.create(name="Pier")
    Entity.objects.bulk_create(Entity(name=f"crane {i}") for i in range(4))
    Observation.objects.bulk_create(
        Observation(name=f"pier note {i}", description="rust", entity=entity) for i in range(3)
    )
    first_rows, total = first.objects.count(), 8
    held = _row_locked(second, second.objects.order_by("pk").last().pk)
    try:
        with worker_and_redis(EMBEDDING_DIM="0") as worker:
            started = _call(url, key, {"operation": "reembed_kg", "background": True})
            assert not started.is_error, started.content[0].text
            job = started.structured_content["job"]
            uuid.UUID(job["id"])
            assert (job["state"], started.structured_content["target"]) == ("queued", "kg")
            assert started.structured_content["rows"] is None  # the summary comes when done

            # The first table is written; the second waits on the lock held above.
            running = _poll(url, key, job["id"], worker=worker,
                            until=lambda s: s["job"]["done"] == first_rows)  # fmt: skip
            assert running[-1]["job"] == {
                "id": job["id"], "state": "running", "done": first_rows, "total": total,
                "error": None,
            }  # fmt: skip
            assert running[-1]["rows"] is None
            held.commit()

            finished = _poll(url, key, job["id"], worker=worker,
                             until=lambda s: s["job"]["state"] != "running")  # fmt: skip
    finally:
        held.close()
    done = finished[-1]
    assert done["job"] == {
        "id": job["id"], "state": "done", "done": total, "total": total, "error": None,
    }  # fmt: skip
    assert (done["operation"], done["target"], done["rows"], done["remaining"]) == (
        "job_status", "kg", total, 0,
    )  # fmt: skip
    assert done["tables"] == {
        "kg_entities": {"pending": 5, "selected": 5, "embedded": 5},
        "kg_observations": {"pending": 3, "selected": 3, "embedded": 3},
    }
    provider = get_provider()
    assert done["provider"] == provider.name and done["dim"] == provider.dim
    for model in (Entity, Observation):
        assert set(model.objects.values_list("embedding_provider", "embedding_dim")) == {
            (provider.name, provider.dim)
        }


@pytest.mark.worker
def test_a_non_staff_user_may_neither_start_nor_follow_a_background_reembed(
    live_server, user, other_user
):
    url = f"{live_server.url}/mcp"
    with worker_and_redis(EMBEDDING_DIM="0") as worker:
        started = _call(url, _key(_staff(user)), {"operation": "reembed", "background": True})
        job_id = started.structured_content["job"]["id"]
        _poll(url, _key(user), job_id, worker=worker, until=lambda s: s["job"]["state"] == "done")

        outsider = _key(other_user)
        refused_start = _call(url, outsider, {"operation": "reembed", "background": True})
        refused_status = _call(url, outsider, {"operation": "job_status", "job_id": job_id})
    for refused in (refused_start, refused_status):
        assert refused.is_error
        assert refused.content[0].text == "Only staff users may re-embed."


@pytest.mark.worker
def test_an_unknown_or_missing_job_id_is_a_tool_error_that_says_so(live_server, user):
    url, key = f"{live_server.url}/mcp", _key(_staff(user))
    unknown = str(uuid.uuid4())
    with worker_and_redis(EMBEDDING_DIM="0"):
        answers = {
            name: _call(url, key, arguments)
            for name, arguments in {
                "unknown": {"operation": "job_status", "job_id": unknown},
                "malformed": {"operation": "job_status", "job_id": "job-1"},
                "missing": {"operation": "job_status"},
                "misplaced": {"operation": "health_check_embeddings", "background": True},
            }.items()
        }
    assert all(answer.is_error for answer in answers.values())
    text = {name: answer.content[0].text for name, answer in answers.items()}
    assert text["unknown"].startswith(f"Unknown job id '{unknown}': no reembed was started")
    assert "job_id: Must be a valid UUID." in text["malformed"]
    assert "job_id: job_status needs job_id." in text["missing"]
    assert "background: Only reembed and reembed_kg run in the background." in text["misplaced"]


def test_without_redis_background_is_refused_with_what_to_do_instead(live_server, user):
    url, key = f"{live_server.url}/mcp", _key(_staff(user))
    Entity.objects.create(name="Pier")
    refused = _call(url, key, {"operation": "reembed_kg", "background": True})
    assert refused.is_error
    text = refused.content[0].text
    assert text.startswith("Background reembeds need a Celery worker, and REDIS_URL is not set")
    assert "without background (with limit to do it in chunks)" in text
    assert Entity.objects.filter(embedding__isnull=True).count() == 1  # nothing ran
    # The synchronous reembed still works, and says it is no job.
    ran = _call(url, key, {"operation": "reembed_kg"})
    assert not ran.is_error and ran.structured_content["rows"] == 1
    assert ran.structured_content["job"] is None


@pytest.mark.worker
def test_a_job_whose_provider_fails_reads_as_failed_with_the_error(live_server, user):
    import socket

    with socket.socket() as probe:  # a port nothing listens on: the provider cannot connect
        probe.bind(("127.0.0.1", 0))
        dead = probe.getsockname()[1]
    url, key = f"{live_server.url}/mcp", _key(_staff(user))
    Entity.objects.create(name="Pier")
    provider = {
        "EMBEDDING_PROVIDER": "openai", "OPENAI_API_KEY": "sk-test",
        "OPENAI_BASE_URL": f"http://127.0.0.1:{dead}/v1", "EMBEDDING_MAX_RETRIES": "0",
        "EMBEDDING_TIMEOUT": "2",
    }  # fmt: skip
    with worker_and_redis(**provider) as worker:
        started = _call(url, key, {"operation": "reembed_kg", "background": True})
        job_id = started.structured_content["job"]["id"]
        seen = _poll(url, key, job_id, worker=worker,
                     until=lambda s: s["job"]["state"] in ("done", "failed"))  # fmt: skip
    job = seen[-1]["job"]
    assert job["state"] == "failed" and seen[-1]["rows"] is None
    assert "0 rows were re-embedded before this; run again to resume" in job["error"]
    assert Entity.objects.filter(embedding__isnull=True).count() == 1
