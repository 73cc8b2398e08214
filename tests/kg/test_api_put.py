"""PUT replaces an entity, observation or edge whole: every field PATCH may change must be given,
and a body missing one is a 400 naming it that changes nothing. PATCH stays partial."""

from __future__ import annotations

import pytest
from drf_spectacular.generators import SchemaGenerator

from kg.models import Edge, Entity, Observation
from tests.kg.factories import EdgeFactory, EntityFactory

pytestmark = pytest.mark.django_db

WHOLE_ENTITY = {
    "name": "Postgres",
    "entity_type": "database",
    "description": "The primary store.",
    "data": {"version": 16},
    "aliases": ["pg"],
    "significance": 0.8,
}


def test_put_replaces_every_field_of_an_entity(mod_api):
    entity = EntityFactory(name="postgres", entity_type="technology", aliases=["psql"])
    r = mod_api.put(f"/api/v1/kg/entities/{entity.pk}/", WHOLE_ENTITY, format="json")
    assert r.status_code == 200, r.content
    entity.refresh_from_db()
    stored = {name: getattr(entity, name) for name in WHOLE_ENTITY}
    assert stored == WHOLE_ENTITY


def test_put_missing_a_field_is_a_400_naming_it_and_changes_nothing(mod_api):
    entity = EntityFactory(name="Redis", description="cache")
    partial = {k: v for k, v in WHOLE_ENTITY.items() if k not in ("aliases", "significance")}
    r = mod_api.put(f"/api/v1/kg/entities/{entity.pk}/", partial, format="json")
    assert r.status_code == 400
    assert r.json()["fields"] == {
        "aliases": ["This field is required."],
        "significance": ["This field is required."],
    }
    entity.refresh_from_db()
    assert (entity.name, entity.description) == ("Redis", "cache")
    # The same body is a fine PATCH: only what it names changes.
    patched = mod_api.patch(f"/api/v1/kg/entities/{entity.pk}/", partial, format="json")
    assert patched.status_code == 200
    entity.refresh_from_db()
    assert (entity.name, entity.aliases) == ("Postgres", [])


def test_put_replaces_an_observation_and_an_edge_whole(mod_api):
    entity = EntityFactory()
    obs = mod_api.post("/api/v1/kg/observations/", {"name": "slow"}, format="json").json()
    url = f"/api/v1/kg/observations/{obs['id']}/"
    assert mod_api.put(url, {"name": "slow queries"}, format="json").status_code == 400
    whole = {
        "name": "slow queries",
        "description": "p99 over 2 s",
        "data": {},
        "entity_id": entity.pk,
        "confidence": 0.6,
    }
    assert mod_api.put(url, whole, format="json").status_code == 200
    row = Observation.objects.get(pk=obs["id"])
    assert (row.name, row.entity_id, row.confidence) == ("slow queries", entity.pk, 0.6)

    edge = EdgeFactory(rel_type="uses", confidence=1.0)
    edge_url = f"/api/v1/kg/edges/{edge.pk}/"
    missing = mod_api.put(edge_url, {"rel_type": "calls"}, format="json")
    assert set(missing.json()["fields"]) == {"data", "confidence"}
    body = {"rel_type": "calls", "data": {"why": "sync"}, "confidence": 0.4}
    assert mod_api.put(edge_url, body, format="json").status_code == 200
    edge = Edge.objects.get(pk=edge.pk)
    assert (edge.rel_type, edge.data, edge.confidence) == ("calls", {"why": "sync"}, 0.4)


def test_users_cannot_put(api):
    entity = EntityFactory(name="Redis")
    r = api.put(f"/api/v1/kg/entities/{entity.pk}/", WHOLE_ENTITY, format="json")
    assert r.status_code == 403
    assert Entity.objects.get(pk=entity.pk).name == "Redis"


def test_the_schema_requires_every_field_for_put_and_none_for_patch():
    schema = SchemaGenerator().get_schema(request=None, public=True)
    path = schema["paths"]["/api/v1/kg/entities/{id}/"]
    components = schema["components"]["schemas"]

    def body(method: str) -> dict:
        ref = path[method]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        return components[ref.rsplit("/", 1)[1]]

    assert sorted(body("put")["required"]) == sorted(WHOLE_ENTITY)
    assert "required" not in body("patch")
