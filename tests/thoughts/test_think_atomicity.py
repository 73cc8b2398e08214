"""One atomic write per thought: an embedding failure is a 503 that stores nothing; a stored
thought queues its KG extraction after commit. Embeddings here go over a real socket to the
loopback OpenAI-wire server."""

from __future__ import annotations

import pytest

from kg.models import Entity, EntityCandidate
from legacymind.providers import embeddings
from tests.thoughts.factories import EntityFactory
from thoughts.models import Thought

pytestmark = pytest.mark.django_db

URL = "/api/v1/think"


@pytest.fixture
def openai_embeddings(settings, openai_stub):
    settings.EMBEDDING_PROVIDER = "openai"
    settings.OPENAI_API_KEY = "test-key"
    settings.OPENAI_BASE_URL = openai_stub.base_url
    settings.EMBEDDING_DIM = 3
    settings.EMBEDDING_MAX_RETRIES = 1
    embeddings._cached.cache_clear()
    yield openai_stub
    embeddings._cached.cache_clear()


# A 3-d vector from the stub's model: the think's own vector is 3-d too, and comparable.
DRIP_VECTOR = {
    "embedding": [1.0, 0.0, 0.0],
    "embedding_dim": 3,
    "embedding_provider": "openai",
    "embedding_model": "text-embedding-3-small",
}


def test_embedding_failure_is_a_503_and_nothing_is_stored(
    api, openai_embeddings, django_capture_on_commit_callbacks
):
    used = EntityFactory(name="Drip", **DRIP_VECTOR)
    openai_embeddings.fail_next(500, times=2)  # the first attempt and its one retry
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        r = api.post(
            URL,
            {
                "content": "Drip irrigation for the garden",
                "injection_scale": 3,
                "hypothesis": "Drip saves water",
                "needs_verification": True,
            },
            format="json",
        )
    assert r.status_code == 503
    body = r.json()
    assert body["error_code"] == "embedding_unavailable"
    assert "nothing was stored" in body["detail"]
    assert len(openai_embeddings.requests) == 2
    assert Thought.objects.count() == 0
    used.refresh_from_db()
    assert used.access_count == 0 and used.last_accessed is None
    assert callbacks == []
    assert EntityCandidate.objects.count() == 0


def test_the_same_request_succeeds_once_the_provider_recovers(
    api, openai_embeddings, django_capture_on_commit_callbacks
):
    EntityFactory(name="Drip", **DRIP_VECTOR)
    openai_embeddings.fail_next(500, times=2)
    payload = {
        "content": "Drip irrigation for the garden",
        "injection_scale": 3,
        "hypothesis": "Drip saves water",
        "needs_verification": True,
        "min_similarity": 0.5,
    }
    assert api.post(URL, payload, format="json").status_code == 503
    with django_capture_on_commit_callbacks(execute=True):
        r = api.post(URL, payload, format="json")
    assert r.status_code == 201, r.json()
    body = r.json()
    assert body["delegated_result"]["embedding_model"] == "text-embedding-3-small"
    assert body["delegated_result"]["embedding_dim"] == 3
    # The thought and its hypothesis travel in one request: both are embedded or neither.
    assert openai_embeddings.requests[-1]["body"]["input"] == [
        payload["content"],
        payload["hypothesis"],
    ]
    assert [m["name"] for m in body["injected"]] == ["Drip"]
    assert [e["name"] for e in body["verification"]["supporting"]] == ["Drip"]
    thought = Thought.objects.get()
    assert thought.embedding_dim == 3 and thought.embedding_provider == "openai"
    assert Entity.objects.get().access_count == 1


def test_a_failed_backfill_does_not_fail_the_thought(api, openai_embeddings):
    row = EntityFactory(name="Unembedded")
    openai_embeddings.fail_next(200)  # the thought's own embedding succeeds ...
    openai_embeddings.fail_next(500, times=2)  # ... the backfill of the KG row does not
    r = api.post(URL, {"content": "Garden notes", "injection_scale": 1}, format="json")
    assert r.status_code == 201, r.json()
    assert r.json()["telemetry"]["injection"]["backfilled"] == 0
    row.refresh_from_db()
    assert row.embedding is None
    assert Thought.objects.count() == 1


def test_a_stored_thought_queues_kg_extraction_after_commit(
    api, django_capture_on_commit_callbacks
):
    content = "Alice moved the Billing API from MySQL to Postgres last week."
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        r = api.post(URL, {"content": content, "injection_scale": 0}, format="json")
    assert r.status_code == 201
    thought = Thought.objects.get()
    assert len(callbacks) == 1  # nothing injected at scale 0: only the extraction
    staged = EntityCandidate.objects.filter(staged_by_thought=thought)
    assert {"Postgres", "MySQL"} <= set(staged.values_list("name", flat=True))


def test_no_extraction_is_queued_when_auto_extract_is_off(
    api, settings, django_capture_on_commit_callbacks
):
    settings.KG_AUTO_EXTRACT = False
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        r = api.post(URL, {"content": "Alice uses Postgres.", "injection_scale": 0}, format="json")
    assert r.status_code == 201
    assert callbacks == []
    assert EntityCandidate.objects.count() == 0
