"""POST /api/v1/inner-voice: the two-thought chain, what is (never) stored, errors, schema."""

from __future__ import annotations

import logging

import pytest
from django.db import connection

from innervoice.models import DialogueExchange, DialogueThread
from tests.innervoice.conftest import FEEDBACK, MARKER, QUERY, SYNTH, ask, entity_at, thought_at
from tests.support.openai_server import use_openai_embeddings
from thoughts.models import Thought

pytestmark = pytest.mark.django_db

TABLES = ("thoughts_thought", "innervoice_dialoguethread", "innervoice_dialogueexchange")


def stored_text() -> str:
    """Every column of every row of the thoughts and inner-voice tables, as JSON text."""
    chunks = []
    with connection.cursor() as cursor:
        for table in TABLES:
            cursor.execute(
                f"SELECT coalesce(string_agg(row_to_json(t)::text, ' '), '') FROM {table} t"
            )
            chunks.append(cursor.fetchone()[0])
    return " ".join(chunks)


def nothing_stored() -> bool:
    return not (
        Thought.objects.filter(origin__startswith="inner_voice").exists()
        or DialogueThread.objects.exists()
        or DialogueExchange.objects.exists()
    )


def test_happy_path_stores_exactly_two_linked_thoughts_and_never_the_query(
    api, user, voice, caplog
):
    caplog.set_level(logging.DEBUG)
    source = thought_at(user, 0.8, 1, content="Billing keeps its invoices in Postgres.")
    memory = entity_at(0.7, 2, name="Postgres", entity_type="technology")
    before = Thought.objects.count()

    response = ask(api)

    assert response.status_code == 201, response.json()
    body = response.json()
    assert Thought.objects.count() == before + 2
    synth = Thought.objects.get(origin="inner_voice")
    feedback = Thought.objects.get(origin="inner_voice.feedback")
    assert body["answer"] == SYNTH
    assert body["synth_thought_id"] == f"thoughts:{synth.id}"
    assert body["feedback_thought_id"] == f"thoughts:{feedback.id}"
    assert body["feedback"] == feedback.content == "\n".join(FEEDBACK.splitlines()[:3])
    assert synth.content.startswith(SYNTH) and synth.injection_scale == 0
    assert synth.previous_thought_id is None
    assert feedback.previous_thought_id == synth.id and feedback.injection_scale == 0
    assert synth.owner == feedback.owner == user
    assert synth.embedding_dim == feedback.embedding_dim == body["embedding_dim"] == 384
    assert (body["synth_provider"], body["synth_model"]) == ("grok", "grok-test")
    assert f"thoughts:{source.id}" in body["sources_compact"]
    assert f"kge:{memory.id}" in body["sources_compact"]
    exchange = DialogueExchange.objects.get()
    assert exchange.synthesis_thought == synth and exchange.feedback_thought == feedback
    assert exchange.thoughts_provided == [str(source.id)]
    assert exchange.memories_injected == [f"kge:{memory.id}"]
    assert body["thread"] == {"id": str(exchange.thread_id), "topic": "", "position": 1}
    # The question reached the model, and nothing else.
    assert any(MARKER in str(r["body"]) for r in voice.requests)
    assert MARKER not in stored_text()
    assert MARKER not in caplog.text
    summary = [r for r in caplog.records if r.name == "innervoice" and r.levelno == logging.INFO]
    assert len(summary) == 1
    assert str(synth.id) in summary[0].getMessage()


def test_previous_thought_id_is_passed_through_to_the_synthesis(api, user, voice):
    earlier = thought_at(user, 0.5, 3)
    response = ask(api, previous_thought_id=f"thoughts:{earlier.id}")
    assert response.status_code == 201
    assert Thought.objects.get(origin="inner_voice").previous_thought_id == earlier.id


def test_without_feedback_only_the_synthesis_is_stored(api, voice):
    body = ask(api, include_feedback=False).json()
    assert body["feedback"] is None and body["feedback_thought_id"] is None
    assert Thought.objects.filter(origin__startswith="inner_voice").count() == 1
    assert DialogueExchange.objects.get().feedback_thought is None


def test_feedback_is_truncated_to_feedback_max_lines(api, voice):
    assert ask(api, feedback_max_lines=1).json()["feedback"] == "Which invoice path fails first"
    ten = ask(api, feedback_max_lines=10).json()["feedback"]
    assert ten.splitlines() == FEEDBACK.splitlines()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"query": "   "}, "query"),
        ({"query": ""}, "query"),
        ({"query": "x" * 4001}, "query"),
        ({"query": 42}, "query"),
        ({"top_k": 51}, "top_k"),
        ({"feedback_max_lines": 0}, "feedback_max_lines"),
        ({"feedback_max_lines": 11}, "feedback_max_lines"),
        ({"mix": 1.5}, "mix"),
        ({"previous_thought_id": "not-an-id"}, "previous_thought_id"),
        ({"thread_id": "nope"}, "thread_id"),
        ({"thread_id": "0b6f3c1e-1111-4a4a-9999-123456789abc", "new_thread": "x"}, "new_thread"),
    ],
)
def test_bad_input_is_a_400_naming_the_field_and_stores_nothing(api, voice, body, field):
    if "query" not in body:
        body = {"query": QUERY, **body}
    response = api.post("/api/v1/inner-voice", body, format="json")
    assert response.status_code == 400
    payload = response.json()
    assert payload["error_code"] == "invalid" and field in payload["fields"]
    assert nothing_stored()
    assert voice.requests == []


def test_missing_query_is_a_400(api, voice):
    response = api.post("/api/v1/inner-voice", {}, format="json")
    assert response.status_code == 400 and "query" in response.json()["fields"]


def test_previous_thought_of_another_user_is_a_404(api, other_user, voice):
    # A well-formed id naming no thought of the asker's is a 404 naming the field (issue 31).
    theirs = thought_at(other_user, 0.5, 4)
    response = ask(api, previous_thought_id=str(theirs.id))
    assert response.status_code == 404
    assert "previous_thought_id" in response.json()["fields"]
    assert nothing_stored()


def test_unauthenticated_is_a_401(anon_api):
    assert ask(anon_api).status_code == 401


def test_query_embedding_failure_is_a_503_with_nothing_stored(api, settings, openai_stub, voice):
    use_openai_embeddings(settings, openai_stub)
    openai_stub.fail_next(500, times=5)
    response = ask(api)
    assert response.status_code == 503
    assert response.json()["error_code"] == "embedding_unavailable"
    assert nothing_stored()


def test_answer_embedding_failure_is_a_503_with_nothing_stored(api, settings, openai_stub, voice):
    use_openai_embeddings(settings, openai_stub)
    good = openai_stub.embed_fn
    calls = []

    def second_call_broken(texts):
        calls.append(texts)
        return good(texts) if len(calls) == 1 else [[1.0] for _ in texts]  # wrong size

    openai_stub.embed_fn = second_call_broken
    response = ask(api)
    assert response.status_code == 503
    assert len(calls) == 2  # the query, then the answer and the feedback
    assert nothing_stored()


def test_schema_documents_the_endpoints_and_their_errors(api):
    schema = api.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    paths = schema["paths"]
    post = paths["/api/v1/inner-voice"]["post"]
    assert {"201", "400", "401", "404", "409", "503"} <= set(post["responses"])
    request = post["requestBody"]["content"]["application/json"]["schema"]["$ref"].split("/")[-1]
    fields = schema["components"]["schemas"][request]["properties"]
    assert {"query", "top_k", "floor", "mix", "include_private", "thread_id", "new_thread"} <= set(
        fields
    )
    assert "/api/v1/inner-voice/threads/" in paths
    assert "/api/v1/inner-voice/threads/{id}/" in paths
    assert "409" in paths["/api/v1/inner-voice/threads/{id}/close/"]["post"]["responses"]


def test_api_root_links_the_inner_voice(api):
    links = api.get("/api/v1/").json()
    assert links["inner_voice"].endswith("/api/v1/inner-voice")
    assert links["inner_voice_threads"].endswith("/api/v1/inner-voice/threads/")


def test_inner_voice_origins_filter_the_thought_list(api, voice):
    ask(api)
    rows = api.get("/api/v1/thoughts/", {"origin": "inner_voice.feedback"}).json()["results"]
    assert [r["origin"] for r in rows] == ["inner_voice.feedback"]
