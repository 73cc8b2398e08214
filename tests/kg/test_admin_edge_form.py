"""The admin's edge form refuses what the API refuses: an edge from an entity to itself."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from kg.models import Edge
from tests.kg.factories import EntityFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client_(db: None) -> Client:
    client = Client()
    client.force_login(User.objects.create_superuser("root", password="pw"))
    return client


def test_a_self_edge_is_refused_with_the_reason_and_nothing_is_saved(admin_client_):
    one, two = EntityFactory(name="Harbour"), EntityFactory(name="Docks")
    form = {"source": one.pk, "target": one.pk, "rel_type": "self", "data": "{}", "confidence": 1}
    response = admin_client_.post("/admin/kg/edge/add/", form)
    assert response.status_code == 200  # the form again, with the error
    assert "source and target are the same" in response.content.decode()
    assert not Edge.objects.exists()
    response = admin_client_.post("/admin/kg/edge/add/", {**form, "target": two.pk})
    assert response.status_code == 302
    assert Edge.objects.get().target_id == two.pk
