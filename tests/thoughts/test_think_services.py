"""``thought_create``: the plain embedded write other pipelines use."""

from __future__ import annotations

import pytest

from kg.models import EntityCandidate
from legacymind.providers import embeddings
from legacymind.providers.embeddings import EmbeddingError
from thoughts.models import Thought
from thoughts.services import thought_create

pytestmark = pytest.mark.django_db


def test_thought_create_stores_an_embedded_thought_and_queues_extraction(
    user, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        thought = thought_create(
            owner=user, content="Alice moved the Billing API to Postgres.", origin="inner_voice"
        )
    stored = Thought.objects.get(id=thought.id)
    assert stored.origin == "inner_voice" and stored.embedding_dim == 384
    assert EntityCandidate.objects.filter(staged_by_thought=stored).exists()


def test_thought_create_without_extraction_queues_nothing(user, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        thought_create(owner=user, content="Quiet note", origin="journal", extract=False)
    assert callbacks == []


def test_thought_create_stores_nothing_when_embedding_fails(user, settings, openai_stub):
    settings.EMBEDDING_PROVIDER = "openai"
    settings.OPENAI_API_KEY = "test-key"
    settings.OPENAI_BASE_URL = openai_stub.base_url
    settings.EMBEDDING_MAX_RETRIES = 0
    embeddings._cached.cache_clear()
    openai_stub.fail_next(500)
    with pytest.raises(EmbeddingError):
        thought_create(owner=user, content="Lost?", origin="journal")
    assert Thought.objects.count() == 0


def test_thought_create_turns_a_lost_insert_race_into_a_conflict_and_keeps_the_first(user):
    """The think service checks the id first; a request that lost the race to the same id
    still gets the 409 (not a 500) from the insert, and the stored thought is untouched."""
    from legacymind.errors import Conflict
    from tests.thoughts.factories import ThoughtFactory

    first = ThoughtFactory(owner=user, content="first")
    with pytest.raises(Conflict) as caught:
        thought_create(
            owner=user,
            content="second",
            origin="human",
            extract=False,
            id=first.id,
            mode="question",
        )
    assert caught.value.fields == {"thought_id": ["A thought with this id exists already."]}
    first.refresh_from_db()
    assert first.content == "first" and Thought.objects.count() == 1
