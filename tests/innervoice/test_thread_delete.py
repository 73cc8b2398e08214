"""DELETE /api/v1/inner-voice/threads/{id}/: the owner deletes a dialogue thread and its
exchanges; the thoughts stay theirs. An ask composing for the thread meanwhile stores nothing."""

from __future__ import annotations

import re
import uuid

import pytest
from django.test import Client

from innervoice.models import DialogueExchange, DialogueThread
from tests.conftest import client_for
from tests.innervoice.conftest import QUERY, SYNTH, ask, route
from tests.innervoice.factories import DialogueExchangeFactory, DialogueThreadFactory
from thoughts.models import Thought

THREADS = "/api/v1/inner-voice/threads/"


@pytest.mark.django_db
def test_the_owner_deletes_a_thread_and_its_exchanges_and_keeps_the_thoughts(api, user):
    thread = DialogueThreadFactory(owner=user)
    exchange = DialogueExchangeFactory(thread=thread)
    kept = DialogueThreadFactory(owner=user)
    assert api.delete(f"{THREADS}{thread.id}/").status_code == 204
    assert api.get(f"{THREADS}{thread.id}/").status_code == 404
    assert [t["id"] for t in api.get(THREADS).json()["results"]] == [str(kept.id)]
    assert not DialogueExchange.objects.filter(pk=exchange.pk).exists()
    for thought in (exchange.synthesis_thought_id, exchange.feedback_thought_id):
        assert api.get(f"/api/v1/thoughts/{thought}/").status_code == 200
    assert api.delete(f"{THREADS}{thread.id}/").status_code == 404


@pytest.mark.django_db
def test_nobody_else_can_delete_it(other_api, anon_api, user):
    thread = DialogueThreadFactory(owner=user)
    theirs = other_api.delete(f"{THREADS}{thread.id}/")
    assert theirs.status_code == 404
    missing = uuid.uuid4()
    gone = other_api.delete(f"{THREADS}{missing}/").json()
    assert theirs.json() == {**gone, "detail": gone["detail"].replace(str(missing), str(thread.id))}
    assert anon_api.delete(f"{THREADS}{thread.id}/").status_code == 401
    assert DialogueThread.objects.filter(pk=thread.pk).exists()


@pytest.mark.django_db
def test_asking_in_a_deleted_thread_is_a_404_that_stores_nothing(api, voice):
    first = ask(api, auto_extract_to_kg=False).json()["thread"]
    assert api.delete(f"{THREADS}{first['id']}/").status_code == 204
    stored = Thought.objects.count()
    again = ask(api, thread_id=first["id"], auto_extract_to_kg=False)
    assert again.status_code == 404
    assert Thought.objects.count() == stored
    # Without a thread named, the next ask starts a new one.
    fresh = ask(api, auto_extract_to_kg=False).json()["thread"]
    assert fresh["id"] != first["id"] and fresh["position"] == 1


@pytest.mark.django_db(transaction=True)
def test_a_thread_deleted_while_its_answer_is_composed_gets_nothing_stored(user, voice):
    """The owner deletes the thread in another tab while the model writes the answer (here:
    from inside the model's reply, through the API). The ask then finds the thread gone when
    it comes to write, and answers 404 with nothing stored, not a 500."""
    api = client_for(user)
    thread = api.post(
        "/api/v1/inner-voice",
        {"query": "What do I know?", "auto_extract_to_kg": False},
        format="json",
    ).json()["thread"]["id"]
    deleted = _delete_while_composing(voice, user, thread)
    stored = Thought.objects.count()
    r = ask(api, thread_id=thread, auto_extract_to_kg=False)
    assert deleted == [204]
    assert r.status_code == 404, r.content
    assert r.json()["fields"] == {"thread_id": ["This thread was deleted."]}
    assert Thought.objects.count() == stored
    assert not DialogueThread.objects.filter(pk=thread).exists()


@pytest.mark.django_db(transaction=True)
def test_the_page_says_the_thread_was_deleted_and_keeps_the_question(user, voice):
    browser = Client()
    browser.force_login(user)
    browser.post("/inner-voice/ask", {"query": QUERY})
    thread = DialogueThread.objects.get()
    deleted = _delete_while_composing(voice, user, str(thread.id))
    stored = Thought.objects.count()
    response = browser.post("/inner-voice/ask", {"query": QUERY, "thread_id": str(thread.id)})
    assert deleted == [204]
    assert response.status_code == 404
    page = response.content.decode()
    assert "That thread was deleted. Nothing was stored" in page
    # Back in the main page's form, with the question as typed and no thread to post to.
    assert re.search(r'<textarea id="query"[^>]*>' + re.escape(QUERY) + "</textarea>", page)
    assert 'name="thread_id"' not in page
    assert Thought.objects.count() == stored


def _delete_while_composing(voice, user, thread_id: str) -> list[int]:
    """The model's first synthesis deletes the thread through the API (another tab); the
    statuses of those deletes are returned."""
    deleted: list[int] = []

    def reply(messages):
        answer = route(messages)
        if answer == SYNTH and not deleted:
            deleted.append(client_for(user).delete(f"{THREADS}{thread_id}/").status_code)
        return answer

    voice.chat_fn = reply
    return deleted
