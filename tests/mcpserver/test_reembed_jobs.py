"""maintenance_ops with background: a reembed queued over Streamable HTTP, run by a real Celery
worker against a real Redis, followed with job_status until it is done, and stopped with
job_cancel."""

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
from tests.support.celery_worker import celery_worker, redis_for_celery, worker_and_redis
from tests.support.mcp_client import with_http_client

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
            if worker.poll() is not None:
                pytest.fail(f"the worker died:\n{worker.stderr.read().decode()[-3000:]}")
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
def test_a_non_staff_user_may_not_start_follow_or_cancel_a_background_reembed(
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
        refused_cancel = _call(url, outsider, {"operation": "job_cancel", "job_id": job_id})
    for refused in (refused_start, refused_status, refused_cancel):
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
                "cancel unknown": {"operation": "job_cancel", "job_id": unknown},
                "cancel missing": {"operation": "job_cancel"},
                "malformed": {"operation": "job_status", "job_id": "job-1"},
                "missing": {"operation": "job_status"},
                "misplaced": {"operation": "health_check_embeddings", "background": True},
            }.items()
        }
    assert all(answer.is_error for answer in answers.values())
    text = {name: answer.content[0].text for name, answer in answers.items()}
    assert text["unknown"].startswith(f"Unknown job id '{unknown}': no reembed was started")
    assert "job_id: Must be a valid UUID." in text["malformed"]
    assert text["cancel unknown"].startswith(f"Unknown job id '{unknown}': no reembed was")
    assert "job_id: job_status needs job_id." in text["missing"]
    assert "job_id: job_cancel needs job_id." in text["cancel missing"]
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


def _backend_state(job_id: str) -> str:
    from legacymind.celery import app

    return app.backend.get_task_meta(job_id)["status"]


@pytest.mark.worker
def test_cancelling_a_running_reembed_stops_it_after_its_batch_and_keeps_the_rows_done(
    live_server, user
):
    url, key = f"{live_server.url}/mcp", _key(_staff(user))
    (first, first_label), (second, second_label) = (
        (t.model, t.label) for t in embedded_tables("kg")
    )
    entity = Entity.objects.create(name="Pier")
    Entity.objects.bulk_create(Entity(name=f"crane {i}") for i in range(4))
    Observation.objects.bulk_create(
        Observation(name=f"pier note {i}", description="rust", entity=entity) for i in range(3)
    )
    first_rows, second_rows = first.objects.count(), second.objects.count()
    total = first_rows + second_rows
    # The first table's one batch waits on this lock: the job is running at a known point.
    held = _row_locked(first, first.objects.order_by("pk").last().pk)
    try:
        with worker_and_redis(EMBEDDING_DIM="0") as worker:
            started = _call(url, key, {"operation": "reembed_kg", "background": True})
            job_id = started.structured_content["job"]["id"]
            counted = _poll(url, key, job_id, worker=worker,
                            until=lambda s: s["job"]["total"] == total)  # fmt: skip
            assert counted[-1]["job"]["state"] == "running"
            assert counted[-1]["job"]["done"] == 0

            cancel = _call(url, key, {"operation": "job_cancel", "job_id": job_id})
            assert not cancel.is_error, cancel.content[0].text
            assert cancel.structured_content["operation"] == "job_cancel"
            assert cancel.structured_content["job"] == {
                "id": job_id, "state": "cancelling", "done": 0, "total": total, "error": None,
            }  # fmt: skip
            held.commit()  # the batch being written completes; the run stops after it

            ended = _poll(url, key, job_id, worker=worker,
                          until=lambda s: s["job"]["state"] != "cancelling")  # fmt: skip
            again = _call(url, key, {"operation": "job_cancel", "job_id": job_id})
    finally:
        held.close()
    last = ended[-1]
    assert last["job"] == {
        "id": job_id, "state": "cancelled", "done": first_rows, "total": total, "error": None,
    }  # fmt: skip
    # What it did before it stopped: the first table, none of the second.
    assert (last["rows"], last["remaining"]) == (first_rows, second_rows)
    assert last["tables"] == {
        first_label: {"pending": first_rows, "selected": first_rows, "embedded": first_rows},
        second_label: {"pending": second_rows, "selected": second_rows, "embedded": 0},
    }
    assert not first.objects.filter(embedding__isnull=True).exists()
    assert second.objects.filter(embedding__isnull=True).count() == second_rows
    # A job that has ended is not cancelled again.
    assert again.is_error
    assert again.content[0].text.startswith(
        f"Job '{job_id}' has already ended (cancelled, {first_rows} of {total} rows): "
        "there is nothing to cancel, and it is left as it was."
    )


@pytest.mark.worker
def test_a_cancelled_queued_reembed_never_runs(live_server, user):
    url, key = f"{live_server.url}/mcp", _key(_staff(user))
    Entity.objects.create(name="Pier")
    with redis_for_celery() as redis_url:  # no worker yet: what is started stays queued
        queued = _call(url, key, {"operation": "reembed_kg", "background": True})
        job_id = queued.structured_content["job"]["id"]
        cancel = _call(url, key, {"operation": "job_cancel", "job_id": job_id})
        assert not cancel.is_error, cancel.content[0].text
        assert cancel.structured_content["job"] == {
            "id": job_id, "state": "cancelled", "done": 0, "total": None, "error": None,
        }  # fmt: skip
        again = _call(url, key, {"operation": "job_cancel", "job_id": job_id})
        assert again.is_error and again.content[0].text.startswith(
            f"Job '{job_id}' has already ended (cancelled): there is nothing to cancel"
        )
        # Queued behind it: once this one is done, the worker has been through the first.
        after = _call(url, key, {"operation": "reembed", "background": True})
        with celery_worker(redis_url, EMBEDDING_DIM="0") as worker:
            _poll(url, key, after.structured_content["job"]["id"], worker=worker,
                  until=lambda s: s["job"]["state"] == "done")  # fmt: skip
            (status,) = _poll(url, key, job_id, worker=worker, until=lambda s: True)
            recorded = _backend_state(job_id)
    assert status["job"]["state"] == "cancelled" and status["rows"] is None
    assert recorded == "CANCELLED"  # the worker found the cancel, and ran nothing
    assert Entity.objects.filter(embedding__isnull=True).count() == 1


@pytest.mark.worker
def test_cancelling_a_finished_reembed_says_so_and_changes_nothing(live_server, user):
    url, key = f"{live_server.url}/mcp", _key(_staff(user))
    Entity.objects.create(name="Pier")
    with worker_and_redis(EMBEDDING_DIM="0") as worker:
        started = _call(url, key, {"operation": "reembed_kg", "background": True})
        job_id = started.structured_content["job"]["id"]
        (done,) = _poll(url, key, job_id, worker=worker,
                        until=lambda s: s["job"]["state"] == "done")[-1:]  # fmt: skip
        refused = _call(url, key, {"operation": "job_cancel", "job_id": job_id})
        (after,) = _poll(url, key, job_id, worker=worker, until=lambda s: True)
    assert refused.is_error
    assert refused.content[0].text == (
        f"Job '{job_id}' has already ended (done, 1 of 1 rows): there is nothing to cancel, "
        "and it is left as it was. (job_id: already done)"
    )
    assert after == done and after["job"]["state"] == "done" and after["rows"] == 1
