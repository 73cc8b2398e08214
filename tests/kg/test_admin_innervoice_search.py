"""The inner-voice exchange admin searches thoughts' words as the Thought admin does: a private
thought's words never match, its thread's topic and id still do."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from innervoice.models import DialogueExchange, DialogueThread
from thoughts.models import Thought

pytestmark = pytest.mark.django_db
EXCHANGES = "/admin/innervoice/dialogueexchange/"


@pytest.fixture
def staff(db: None) -> Client:
    client = Client()
    client.force_login(User.objects.create_superuser("root", password="pw-root-123"))
    return client


def _exchange(owner: User, topic: str, words: str, *, private: bool) -> DialogueExchange:
    thread = DialogueThread.objects.create(owner=owner, topic=topic)
    thought = Thought.objects.create(owner=owner, content=words, is_private=private)
    return DialogueExchange.objects.create(thread=thread, position=1, synthesis_thought=thought)


def found(client: Client, q: str) -> set[int]:
    response = client.get(EXCHANGES, {"q": q})
    assert response.status_code == 200
    return {e.pk for e in response.context["cl"].result_list}


def test_search_never_matches_the_words_of_a_private_thought(staff, user):
    public = _exchange(user, "work", "You protect your reliability at work.", private=False)
    secret = _exchange(user, "health", "You fear the diagnosis you told no one.", private=True)
    assert found(staff, "diagnosis") == set()
    assert found(staff, '"told no one"') == set()
    assert found(staff, "reliability") == {public.pk}
    # The private exchange is still found by what the admin may read: its thread.
    assert found(staff, "health") == {secret.pk}
    assert found(staff, str(secret.thread_id)[:8]) == {secret.pk}
    assert found(staff, "health diagnosis") == set()  # every word must match something readable


def test_exchange_list_shows_a_private_thought_without_its_words(staff, user):
    _exchange(user, "health", "You fear the diagnosis you told no one.", private=True)
    page = staff.get(EXCHANGES).content.decode()
    assert "(private thought)" in page and "diagnosis" not in page
