"""Bad input to the KG API is a 400 naming the field, and nothing is written.

Each case here was a 500 before (found by fuzzing the OpenAPI schema with schemathesis): values
Postgres cannot store (NUL characters, integers past bigint) reached the database, and a
source thought that does not exist failed on the foreign key.
"""

from __future__ import annotations

import pytest

from kg.models import Edge, Entity, EntityCandidate, Observation
from tests.kg.factories import EdgeFactory, EntityFactory, ThoughtFactory

pytestmark = pytest.mark.django_db
ENTITIES = "/api/v1/kg/entities/"


def invalid(response, field: str) -> str:
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["error_code"] == "invalid"
    assert field in body["fields"], body
    return str(body["fields"][field])


def not_found(response, field: str) -> str:
    # A well-formed id naming no row the requester may see: a 404 naming the field (issue 31).
    assert response.status_code == 404, response.content
    body = response.json()
    assert body["error_code"] == "not_found"
    assert field in body["fields"], body
    return str(body["fields"][field])


@pytest.mark.parametrize(
    "url, field",
    [
        (ENTITIES + "?q=a%00b", "q"),
        (ENTITIES + "?entity_type=a%00b", "entity_type"),
        ("/api/v1/kg/edges/?rel_type=uses%00", "rel_type"),
        ("/api/v1/kg/edges/?entity=%C2%B2", "entity"),  # "²".isdigit() is True
        ("/api/v1/kg/edges/?entity=abc", "entity"),
        ("/api/v1/kg/observations/?entity=-1", "entity"),
        ("/api/v1/kg/candidates/?offset=44538348486186622976", "offset"),
    ],
)
def test_list_filters_that_the_database_cannot_take_are_400(mod_api, url, field):
    invalid(mod_api.get(url), field)


def test_an_entity_id_past_bigint_is_an_empty_page(api):
    response = api.get("/api/v1/kg/observations/?entity=99999999999999999999999")
    assert response.status_code == 200
    assert response.json()["results"] == []


def test_list_filters_still_filter(api):
    cart = EntityFactory(name="cart-service", entity_type="service")
    EntityFactory(name="polariser", entity_type="tool")
    edge = EdgeFactory(source=cart, rel_type="uses")
    EdgeFactory(rel_type="needs")
    names = [e["name"] for e in api.get(ENTITIES + "?q=CART&entity_type=Service").json()["results"]]
    assert names == ["cart-service"]
    edges = api.get(f"/api/v1/kg/edges/?entity={cart.pk}&rel_type=uses").json()["results"]
    assert [e["id"] for e in edges] == [edge.pk]


def test_a_filter_does_not_hide_the_object_it_names(api):
    entity = EntityFactory(name="polariser")
    assert api.get(f"{ENTITIES}{entity.pk}/?q=nothing-like-it").status_code == 200


@pytest.mark.parametrize(
    "data",
    [{"note": "a\x00b"}, {"a\x00": 1}, {"deep": [{"list": ["ok", "bad\x00"]}]}],
    ids=["value", "key", "nested"],
)
def test_json_data_with_a_nul_character_is_400_and_not_stored(mod_api, data):
    invalid(mod_api.post(ENTITIES, {"name": "x", "data": data}, format="json"), "data")
    invalid(
        mod_api.post("/api/v1/kg/observations/", {"name": "x", "data": data}, format="json"), "data"
    )
    entity = EntityFactory(name="kept", data={"before": 1})
    invalid(mod_api.patch(f"{ENTITIES}{entity.pk}/", {"data": data}, format="json"), "data")
    assert not Entity.objects.filter(name="x").exists()
    assert not Observation.objects.filter(name="x").exists()
    entity.refresh_from_db()
    assert entity.data == {"before": 1}


def test_json_data_without_nul_is_stored_as_sent(mod_api):
    data = {"unicode": "é ☃ \U0001f600", "nested": {"list": [1, None, "two"]}}
    response = mod_api.post(ENTITIES, {"name": "x", "data": data}, format="json")
    assert response.status_code == 201, response.content
    assert Entity.objects.get(name="x").data == data


def test_admin_refuses_json_with_a_nul_character(client, moderator):
    # The same rule as the API, for moderators editing in the admin (a model validator).
    moderator.is_staff = True
    moderator.is_superuser = True
    moderator.save()
    client.force_login(moderator)
    entity = EntityFactory(name="kept", data={"before": 1})
    form = {
        "name": "kept",
        "entity_type": entity.entity_type,
        "description": "",
        "data": '{"a": "b\\u0000"}',
        "aliases": "",
        "significance": "0.5",
        "access_count": "0",
    }
    response = client.post(f"/admin/kg/entity/{entity.pk}/change/", form)
    assert response.status_code == 200  # the form again, with its error
    assert "Null characters are not allowed." in response.content.decode()
    entity.refresh_from_db()
    assert entity.data == {"before": 1}


@pytest.mark.parametrize("path", ["entities/", "observations/"])
def test_source_thought_must_be_one_of_the_requesters_own(mod_api, moderator, other_user, path):
    mine = ThoughtFactory(owner=moderator)
    theirs = ThoughtFactory(owner=other_user, is_private=True)
    url = "/api/v1/kg/" + path
    missing = "2e65db30-5ffb-1f2c-898b-86d1c79d5125"
    for thought_id in (missing, str(theirs.pk)):
        message = not_found(
            mod_api.post(url, {"name": "x", "source_thought_id": thought_id}, format="json"),
            "source_thought_id",
        )
        # The same words for a missing thought and another user's: nothing to tell them apart.
        assert f"No thought {thought_id} of yours." in message
    assert not Entity.objects.filter(name="x").exists()
    assert not Observation.objects.filter(name="x").exists()
    ok = mod_api.post(url, {"name": "x", "source_thought_id": str(mine.pk)}, format="json")
    assert ok.status_code == 201, ok.content
    assert ok.json()["source_thought_id"] == str(mine.pk)


def test_edge_with_another_users_source_thought_is_404(mod_api, other_user):
    a, b = EntityFactory(), EntityFactory()
    theirs = ThoughtFactory(owner=other_user)
    body = {"source_id": a.pk, "target_id": b.pk, "rel_type": "uses"}
    not_found(
        mod_api.post(
            "/api/v1/kg/edges/", {**body, "source_thought_id": str(theirs.pk)}, format="json"
        ),
        "source_thought_id",
    )
    assert not Edge.objects.exists()
    assert EntityCandidate.objects.count() == 0


@pytest.mark.parametrize("kind", ["entities", "observations"])
def test_an_overlong_description_is_a_400_and_nothing_changes(mod_api, kind):
    """Descriptions are capped (10,000 characters): a longer one would be cut by the embedder
    and fill every thought it is injected into. Create and update alike; the cap itself fits."""
    url = f"/api/v1/kg/{kind}/"
    body = {"name": "cart-service", "description": "x" * 10_001}
    assert "10000" in invalid(mod_api.post(url, body, format="json"), "description")
    assert not Entity.objects.exists() and not Observation.objects.exists()

    made = mod_api.post(url, {**body, "description": "x" * 10_000}, format="json")
    assert made.status_code == 201, made.content
    row = made.json()["id"]
    patch = mod_api.patch(f"{url}{row}/", {"description": "y" * 10_001}, format="json")
    assert "10000" in invalid(patch, "description")
    model = Entity if kind == "entities" else Observation
    assert model.objects.get(pk=row).description == "x" * 10_000
