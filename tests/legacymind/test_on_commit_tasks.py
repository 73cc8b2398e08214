"""Work queued after a commit never turns the committed request into an error.

Without REDIS_URL tasks run eagerly, in the request: one that raises (here the embedding of a
newly approved entity, its provider failing) is logged at ERROR with its name, and the
moderator still gets the approval that was stored. And that configuration reaches no broker,
so kombu has no reason to warn about one."""

from __future__ import annotations

import logging

import pytest

from kg.models import Entity
from tests.kg.factories import EntityCandidateFactory
from tests.support.openai_server import use_openai_embeddings
from tests.support.settings_process import settings_process


@pytest.mark.django_db(transaction=True)  # on-commit work runs inside the request, as deployed
def test_an_eager_task_failing_after_commit_is_logged_and_the_request_still_succeeds(
    mod_api, settings, openai_stub, caplog
):
    use_openai_embeddings(settings, openai_stub)
    candidate = EntityCandidateFactory(name="Redis")
    openai_stub.fail_next(500)  # the approved entity's embedding, run at commit
    caplog.set_level(logging.INFO)
    item = {"id": candidate.pk, "kind": "entity", "decision": "approve"}
    r = mod_api.post("/api/v1/kg/candidates/decide", {"items": [item]}, format="json")
    assert r.status_code == 200, r.content
    assert r.json()["results"][0]["ok"] is True
    assert Entity.objects.get(name="Redis").embedded_at is None  # stored; embedding failed
    errors = [rec for rec in caplog.records if rec.levelno >= logging.ERROR]
    assert [rec.getMessage() for rec in errors] == ["task kg.entity_embed failed after commit"]
    assert errors[0].exc_info is not None  # the task's own failure, in full, as a worker logs it


def test_without_redis_eager_tasks_do_not_warn_about_a_broker_host():
    proc = settings_process(
        "import django; django.setup()\n"
        "from legacymind.celery import ping\n"
        "print(ping.delay('x').get())\n",
        REDIS_URL=None,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "pong:x"
    assert "hostname" not in proc.stderr, proc.stderr
