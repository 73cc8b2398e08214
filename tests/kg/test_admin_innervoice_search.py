"""The inner-voice exchange admin searches thoughts' words as the Thought admin does: a private
thought's words never match, its thread's topic and id still do; the thread and exchange lists
take URL filters only on their own filters and ids."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from innervoice.models import DialogueExchange, DialogueThread
from tests.support.pages import unmasked
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


THREADS = "/admin/innervoice/dialoguethread/"


def test_threads_and_exchanges_are_read_only_in_the_admin(staff, user, other_user):
    """An admin-made exchange could link another user's private thought into a dialogue's
    history, and a changed owner would hand a thread to someone else: neither can be saved."""
    mine = _exchange(user, "work", "You protect your reliability.", private=False)
    theirs = Thought.objects.create(owner=other_user, content="Bob's secret", is_private=True)
    added = staff.post(
        f"{EXCHANGES}add/",
        {"thread": mine.thread_id, "position": 2, "synthesis_thought": theirs.pk},
    )
    assert added.status_code == 403
    changed = staff.post(
        f"{THREADS}{mine.thread_id}/change/", {"owner": other_user.pk, "topic": "x"}
    )
    assert changed.status_code == 403
    assert DialogueExchange.objects.count() == 1
    thread = DialogueThread.objects.get()
    assert (thread.owner_id, thread.topic) == (user.pk, "work")
    page = staff.get(f"{THREADS}{mine.thread_id}/change/")  # still viewable
    assert page.status_code == 200 and "work" in page.content.decode()


def test_a_summary_folded_from_a_private_thought_is_neither_shown_nor_searched(staff, user):
    secret = _exchange(user, "health", "You fear the diagnosis.", private=True)
    DialogueThread.objects.filter(pk=secret.thread_id).update(summary="divorce lawyer costs")
    public = _exchange(user, "work", "You protect your reliability.", private=False)
    DialogueThread.objects.filter(pk=public.thread_id).update(summary="deadline pressure")

    def threads(q: str) -> set[object]:
        response = staff.get(THREADS, {"q": q})
        assert response.status_code == 200
        return {t.pk for t in response.context["cl"].result_list}

    assert threads("divorce") == set()
    assert threads("health") == {secret.thread_id}  # its topic is readable
    assert threads("deadline") == {public.thread_id}
    page = staff.get(f"{THREADS}{secret.thread_id}/change/").content.decode()
    assert "divorce" not in page and "visible only to its owner" in page
    assert "deadline pressure" in staff.get(f"{THREADS}{public.thread_id}/change/").content.decode()


@pytest.mark.parametrize(
    ("url", "lookup", "hit", "miss"),
    [
        (THREADS, "summary__startswith", "divorce", "holiday"),
        (THREADS, "exchanges__synthesis_thought__content__icontains", "diagnosis", "sunburn"),
        (EXCHANGES, "synthesis_thought__content__startswith", "You fear", "You love"),
        (EXCHANGES, "thread__summary__icontains", "divorce", "holiday"),
    ],
)
def test_url_filters_on_words_are_refused_alike_on_a_hit_and_a_miss(
    staff, user, url, lookup, hit, miss
):
    """A URL filter on a thread's own summary (folded from a private synthesis) was allowed:
    the thread was listed on a hit and not on a miss."""
    secret = _exchange(user, "health", "You fear the diagnosis.", private=True)
    DialogueThread.objects.filter(pk=secret.thread_id).update(summary="divorce lawyer costs")
    on_hit = staff.get(url, {lookup: hit})
    on_miss = staff.get(url, {lookup: miss})
    assert on_hit.status_code == on_miss.status_code == 400
    assert unmasked(on_hit.content) == unmasked(on_miss.content)
    assert b"divorce" not in on_hit.content and b"diagnosis" not in on_hit.content


def test_the_lists_own_filters_still_work(staff, user):
    secret = _exchange(user, "health", "You fear the diagnosis.", private=True)
    _exchange(user, "work", "You protect your reliability.", private=False)
    DialogueThread.objects.filter(pk=secret.thread_id).update(status="closed")

    def rows(url: str, params: dict[str, object]) -> list[object]:
        response = staff.get(url, params)
        assert response.status_code == 200
        return [row.pk for row in response.context["cl"].result_list]

    assert rows(THREADS, {"status__exact": "closed"}) == [secret.thread_id]
    assert rows(THREADS, {"owner__id__exact": user.pk, "id": secret.thread_id}) == [
        secret.thread_id
    ]
    assert rows(EXCHANGES, {"thread__status__exact": "closed"}) == [secret.pk]
    assert rows(EXCHANGES, {"thread": secret.thread_id}) == [secret.pk]
