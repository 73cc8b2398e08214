"""Entities and observations written in the admin are embedded after commit, as the API's
writes are: a new one, and one whose text changed, are then found by searches by that text.
A duplicate name says so in words, not by the constraint's name."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from kg.models import Entity, Observation
from legacymind.providers.embeddings import get_provider

# transaction=True: the embedding runs after commit (Celery eager), as without a worker.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def staff() -> Client:
    client = Client()
    client.force_login(User.objects.create_superuser("root", password="pw"))
    return client


def vector_of(text: str) -> list[float]:
    return [round(float(x), 5) for x in get_provider().embed([text])[0]]


def stored(row: Entity | Observation) -> list[float]:
    row.refresh_from_db()
    assert row.embedding is not None, "not embedded"
    return [round(float(x), 5) for x in row.embedding]


ENTITY = {"name": "Reykjavik harbour", "entity_type": "place", "description": "", "data": "{}",
          "aliases": "", "significance": 0.5, "access_count": 0}  # fmt: skip


def test_an_entity_added_then_renamed_in_the_admin_is_embedded_by_its_current_text(staff):
    assert staff.post("/admin/kg/entity/add/", ENTITY).status_code == 302
    entity = Entity.objects.get()
    assert stored(entity) == vector_of("Reykjavik harbour (place)")
    assert entity.embedding_provider == get_provider().name
    renamed = {**ENTITY, "name": "Iceland island nation"}
    assert staff.post(f"/admin/kg/entity/{entity.pk}/change/", renamed).status_code == 302
    assert stored(entity) == vector_of("Iceland island nation (place)")


def test_an_observation_added_in_the_admin_is_embedded(staff):
    form = {"name": "harbour note", "description": "ferries leave at dawn", "data": "{}",
            "confidence": 1, "significance": 0.5, "access_count": 0}  # fmt: skip
    assert staff.post("/admin/kg/observation/add/", form).status_code == 302
    assert stored(Observation.objects.get()) == vector_of("harbour note - ferries leave at dawn")


def test_a_duplicate_name_is_refused_in_words(staff):
    staff.post("/admin/kg/entity/add/", ENTITY)
    response = staff.post("/admin/kg/entity/add/", {**ENTITY, "name": "REYKJAVIK HARBOUR"})
    assert response.status_code == 200
    page = response.content.decode()
    assert "already in use for this type" in page
    assert "kg_entity_name_type_ci_uniq" not in page
    assert Entity.objects.count() == 1
