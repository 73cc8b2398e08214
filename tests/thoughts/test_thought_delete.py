"""DELETE /api/v1/thoughts/{id}/: an owner deletes a thought, and what was drawn from it goes or
stays as its privacy says; nobody else can, and for them the thought reads as missing."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from django.db import connection, transaction

from innervoice.models import DialogueExchange
from kg.models import Entity, EntityCandidate, Observation, ThoughtExtraction
from tests.conftest import client_for
from tests.innervoice.factories import DialogueExchangeFactory, DialogueThreadFactory
from tests.kg.factories import EntityCandidateFactory, EntityFactory
from tests.support.pg_trace import another_connection
from tests.thoughts.factories import ThoughtFactory
from thoughts.models import Thought
from thoughts.tasks import thought_extract_task

pytestmark = pytest.mark.django_db


def url(thought: Thought, prefix: str = "") -> str:
    return f"/api/v1/thoughts/{prefix}{thought.pk}/"


def test_the_owner_deletes_a_thought_and_it_is_gone(api, user):
    thought = ThoughtFactory(owner=user)
    kept = ThoughtFactory(owner=user)
    assert api.delete(url(thought)).status_code == 204
    assert api.get(url(thought)).status_code == 404
    assert not Thought.objects.filter(pk=thought.pk).exists()
    assert Thought.objects.filter(pk=kept.pk).exists()
    again = api.delete(url(thought))
    assert again.status_code == 404 and again.json()["error_code"] == "not_found"


def test_the_id_think_answers_with_is_taken_too(api, user):
    thought = ThoughtFactory(owner=user)
    assert api.delete(url(thought, "thoughts:")).status_code == 204
    assert not Thought.objects.filter(pk=thought.pk).exists()


def test_nobody_else_can_delete_it_and_it_reads_as_missing(other_api, anon_api, user):
    thought = ThoughtFactory(owner=user)
    theirs = other_api.delete(url(thought))
    assert theirs.status_code == 404
    missing = other_api.delete("/api/v1/thoughts/00000000-0000-4000-8000-000000000000/")
    assert theirs.json() == missing.json()  # the same answer as for no such thought
    assert anon_api.delete(url(thought)).status_code == 401
    assert Thought.objects.filter(pk=thought.pk).exists()


def test_what_a_private_thought_gave_the_graph_goes_with_it(api, user):
    private = ThoughtFactory(owner=user, is_private=True, content="My plan for Quillport.")
    entity = EntityFactory(name="Quillport", source_thought=private)
    obs = Observation.objects.create(name="Quillport is mine", source_thought=private)
    cand = EntityCandidateFactory(staged_by_thought=private)
    ThoughtExtraction.objects.create(thought=private, extracted_at=private.created_at)
    assert api.delete(url(private)).status_code == 204
    assert not Entity.objects.filter(pk=entity.pk).exists()
    assert not Observation.objects.filter(pk=obs.pk).exists()
    assert not EntityCandidate.objects.filter(pk=cand.pk).exists()
    assert not ThoughtExtraction.objects.filter(thought_id=private.pk).exists()


def test_what_a_shared_thought_gave_the_graph_stays_without_the_link(api, user):
    shared = ThoughtFactory(owner=user, content="The export worker uses Redis.")
    entity = EntityFactory(name="Redis", source_thought=shared)
    cand = EntityCandidateFactory(staged_by_thought=shared)
    assert api.delete(url(shared)).status_code == 204
    entity.refresh_from_db()
    cand.refresh_from_db()
    assert entity.source_thought_id is None and cand.staged_by_thought_id is None


def test_links_that_name_it_stay_unresolved(api, user):
    first = ThoughtFactory(owner=user)
    second = ThoughtFactory(owner=user, previous_thought_id=first.pk)
    assert api.delete(url(first)).status_code == 204
    link = api.get(url(second)).json()["links"]["previous_thought"]
    assert link == {"id": str(first.pk), "status": "string"}


def test_an_inner_voice_exchange_goes_with_its_synthesis_and_keeps_a_lost_follow_up(api, user):
    thread = DialogueThreadFactory(owner=user)
    by_synthesis = DialogueExchangeFactory(thread=thread)
    by_follow_up = DialogueExchangeFactory(thread=thread)
    assert api.delete(url(by_synthesis.synthesis_thought)).status_code == 204
    assert api.delete(url(by_follow_up.feedback_thought)).status_code == 204
    assert not DialogueExchange.objects.filter(pk=by_synthesis.pk).exists()
    by_follow_up.refresh_from_db()
    assert by_follow_up.feedback_thought_id is None
    assert Thought.objects.filter(pk=by_synthesis.feedback_thought_id).exists()


def test_an_extraction_queued_before_the_delete_does_nothing(user):
    thought = ThoughtFactory(owner=user, content="The export worker depends on RabbitMQ.")
    thought_id = str(thought.pk)
    thought.delete()
    assert thought_extract_task(thought_id) == {"deleted": True}
    assert EntityCandidate.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_a_delete_waits_for_an_extraction_staging_for_the_thought(user):
    """An extraction stages candidates holding the thought's row lock (kg.services.extract).
    A delete that arrives meanwhile waits, then takes what was staged with the thought: here
    the thought is shared, so the candidate stays without the link."""
    thought = ThoughtFactory(owner=user)
    stage = lambda: EntityCandidateFactory(staged_by_thought_id=thought.pk, name="RabbitMQ")  # noqa: E731
    with _another_session_holding_the_lock(thought, then=stage):
        response = client_for(user).delete(url(thought))
    assert response.status_code == 204, response.content
    assert not Thought.objects.filter(pk=thought.pk).exists()
    assert EntityCandidate.objects.get(name="RabbitMQ").staged_by_thought_id is None


@pytest.mark.django_db(transaction=True)
def test_an_extraction_that_meets_a_delete_in_progress_stages_nothing(user):
    """The other order: the delete holds the lock when the extraction, its text already read,
    comes to stage. It waits, finds the thought gone, and stages nothing."""
    thought = ThoughtFactory(owner=user, content="The export worker depends on RabbitMQ.")
    delete = lambda: Thought.objects.filter(pk=thought.pk).delete()  # noqa: E731
    with _another_session_holding_the_lock(thought, then=delete):
        outcome = thought_extract_task(str(thought.pk))
    assert outcome == {"deleted": True}
    assert EntityCandidate.objects.count() == 0
    assert not ThoughtExtraction.objects.exists()


@contextmanager
def _another_session_holding_the_lock(
    thought: Thought, *, then: Callable[[], object]
) -> Iterator[None]:
    """In another thread (so another connection): lock the thought's row and do ``then``, and
    commit only once some backend is seen waiting on a lock, whichever statement the block's
    work waits in. The block runs once ``then`` is done."""
    done = threading.Event()
    errors: list[BaseException] = []

    def side() -> None:
        try:
            with transaction.atomic():
                Thought.objects.select_for_update().filter(pk=thought.pk).exists()
                then()
                done.set()
                _wait_until_a_backend_waits_on_a_lock()
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)
        finally:
            done.set()
            connection.close()

    runner = threading.Thread(target=side)
    runner.start()
    assert done.wait(10)
    try:
        yield
    finally:
        runner.join(10)
    assert not errors, errors


def _wait_until_a_backend_waits_on_a_lock(timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    with another_connection() as side:
        while time.monotonic() < deadline:
            (waiting,) = side.execute(
                "SELECT count(*) FROM pg_stat_activity"
                " WHERE datname = current_database() AND wait_event_type = 'Lock'"
            ).fetchone()
            if waiting:
                return
            time.sleep(0.02)
    raise AssertionError("the delete never waited on the thought's lock")
