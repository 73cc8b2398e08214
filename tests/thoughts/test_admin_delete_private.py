"""Deleting a private thought in the admin: the confirmation page says what goes with it (the
memories and candidates drawn from it) by kind and count, never by their names, which are the
thought's words; the thought itself is shown as "(private thought)"."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from kg.models import Entity, EntityCandidate, Observation
from tests.kg.factories import EntityCandidateFactory, EntityFactory, ThoughtFactory

pytestmark = pytest.mark.django_db

SECRET = "Quillfeather"


@pytest.fixture
def staff() -> Client:
    client = Client()
    client.force_login(User.objects.create_superuser("root", password="pw"))
    return client


def drawn(thought) -> None:
    EntityFactory(name=f"{SECRET} clinic", entity_type="place", source_thought=thought)
    Observation.objects.create(name=f"{SECRET} note", description="x", source_thought=thought)
    EntityCandidateFactory(name=f"Dr {SECRET}", staged_by_thought=thought)


def test_the_delete_page_of_a_private_thought_names_nothing_drawn_from_it(staff, user):
    private = ThoughtFactory(owner=user, is_private=True, content=f"my therapist {SECRET}")
    drawn(private)
    page = staff.get(f"/admin/thoughts/thought/{private.pk}/delete/")
    assert page.status_code == 200
    text = page.content.decode()
    assert SECRET not in text
    assert "(private thought)" in text
    assert "with it, not named here: 1 entities, 1 observations, 1 entity candidates" in text
    assert (
        staff.post(f"/admin/thoughts/thought/{private.pk}/delete/", {"post": "yes"}).status_code
        == 302
    )
    assert not Entity.objects.exists() and not Observation.objects.exists()
    assert not EntityCandidate.objects.exists()


def test_the_bulk_delete_page_names_nothing_drawn_from_a_private_thought(staff, user):
    private = ThoughtFactory(owner=user, is_private=True, content=f"my therapist {SECRET}")
    shared = ThoughtFactory(owner=user, content="the public roadmap")
    drawn(private)
    form = {"action": "delete_selected", "_selected_action": [str(private.pk), str(shared.pk)]}
    page = staff.post("/admin/thoughts/thought/", form)
    assert page.status_code == 200
    assert SECRET not in page.content.decode()


def test_the_delete_page_of_a_user_with_private_thoughts_names_nothing_drawn_from_them(staff):
    carol = User.objects.create_user("carol", password="pw-carol")
    private = ThoughtFactory(owner=carol, is_private=True, content=f"my therapist {SECRET}")
    drawn(private)
    page = staff.get(f"/admin/auth/user/{carol.pk}/delete/")
    assert page.status_code == 200
    text = page.content.decode()
    assert SECRET not in text and "with it, not named here:" in text
    assert staff.post(f"/admin/auth/user/{carol.pk}/delete/", {"post": "yes"}).status_code == 302
    assert not Entity.objects.exists() and not User.objects.filter(username="carol").exists()
