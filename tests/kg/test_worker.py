"""The on-commit extraction through a real Celery worker and a real Redis."""

from __future__ import annotations

import time

import pytest

from kg.models import EdgeCandidate
from tests.kg.factories import ThoughtFactory
from tests.support.celery_worker import worker_and_redis
from thoughts.services import thought_extract_on_commit


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_committed_thought_is_extracted_by_the_worker():
    with worker_and_redis(IV_CLI_CMD="/bin/false") as worker:
        thought = ThoughtFactory(content="cart-service -> session-store", origin="journal")
        assert thought_extract_on_commit(thought_id=thought.id)  # autocommit: sent now
        deadline = time.monotonic() + 60
        while not EdgeCandidate.objects.exists():
            assert worker.poll() is None, worker.stderr.read().decode()[-2000:]  # type: ignore[union-attr]
            assert time.monotonic() < deadline, "the worker did not stage the thought"
            time.sleep(0.2)
        edge = EdgeCandidate.objects.get()
        assert (edge.source_name, edge.target_name) == ("cart-service", "session-store")
        assert edge.staged_by_thought_id == thought.id and edge.origin == "journal"


@pytest.mark.django_db(transaction=True)
def test_moderators_group_survives_a_flush():
    from django.contrib.auth.models import Group
    from django.core.management import call_command

    call_command("flush", interactive=False, verbosity=0)
    group = Group.objects.get(name="KG moderators")
    assert group.permissions.filter(codename="moderate", content_type__app_label="kg").exists()
