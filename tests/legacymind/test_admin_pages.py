"""The inner-voice admin: threads and exchanges list, search, filter and open for staff."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from innervoice.models import DialogueExchange, DialogueThread
from thoughts.models import Thought

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(client):
    admin = User.objects.create_superuser("boss", "boss@example.org", "pw-boss-123")
    client.force_login(admin)
    return client


@pytest.fixture
def thread(user):
    thread = DialogueThread.objects.create(owner=user, topic="why meetings drain me")
    synthesis = Thought.objects.create(owner=user, content="You protect your reliability.")
    feedback = Thought.objects.create(owner=user, content="What would saying no cost you?")
    DialogueExchange.objects.create(
        thread=thread, position=1, synthesis_thought=synthesis, feedback_thought=feedback
    )
    DialogueThread.objects.create(owner=user, topic="closed one", status="closed")
    return thread


def test_thread_list_shows_owner_status_and_exchange_count(staff_client, thread):
    response = staff_client.get("/admin/innervoice/dialoguethread/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "why meetings drain me" in page and "alice" in page
    assert response.context["cl"].result_count == 2
    row = next(r for r in response.context["cl"].result_list if r.pk == thread.pk)
    assert row.exchange_total == 1


def test_thread_list_filters_and_searches(staff_client, thread):
    closed = staff_client.get("/admin/innervoice/dialoguethread/", {"status__exact": "closed"})
    assert [t.topic for t in closed.context["cl"].result_list] == ["closed one"]
    found = staff_client.get("/admin/innervoice/dialoguethread/", {"q": "meetings"})
    assert [t.pk for t in found.context["cl"].result_list] == [thread.pk]


def test_thread_page_shows_its_exchanges_inline(staff_client, thread):
    response = staff_client.get(f"/admin/innervoice/dialoguethread/{thread.pk}/change/")
    assert response.status_code == 200
    assert "You protect your reliability." in response.content.decode()


def test_exchange_list_and_page_render(staff_client, thread):
    listing = staff_client.get("/admin/innervoice/dialogueexchange/", {"summarized__exact": "0"})
    assert listing.status_code == 200
    assert listing.context["cl"].result_count == 1
    exchange = DialogueExchange.objects.get()
    page = staff_client.get(f"/admin/innervoice/dialogueexchange/{exchange.pk}/change/")
    assert page.status_code == 200


def test_non_staff_cannot_open_the_inner_voice_admin(client, user):
    client.force_login(user)
    response = client.get("/admin/innervoice/dialoguethread/")
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
