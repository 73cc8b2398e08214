"""The KG API over HTTP: extract, graph CRUD for moderators, candidates and decisions."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from kg.models import Blocklist, Edge, EdgeCandidate, Entity, EntityCandidate
from legacymind.providers.embeddings import fields_for, get_provider
from tests.conftest import client_for
from tests.kg.factories import (
    EdgeCandidateFactory,
    EdgeFactory,
    EntityCandidateFactory,
    EntityFactory,
    ThoughtFactory,
)
from thoughts.models import Thought

pytestmark = pytest.mark.django_db
EXTRACT = "/api/v1/kg/extract"


def test_extract_contract_with_heuristic_and_staging(api):
    resp = api.post(EXTRACT, {"text": "The Analytics team uses dbt and Looker."}, format="json")
    assert resp.status_code == 200, resp.json()
    body = resp.json()
    assert set(body) == {"provider", "model", "entities", "edges", "staged"}
    assert body["provider"] == "heuristic"
    assert {e["name"] for e in body["entities"]} == {"Analytics team", "dbt", "Looker"}
    assert set(body["entities"][0]) == {"name", "entity_type", "confidence"}
    assert {(e["source"], e["target"]) for e in body["edges"]} == {
        ("Analytics team", "dbt"),
        ("Analytics team", "Looker"),
    }
    assert set(body["edges"][0]) == {"source", "target", "rel_type", "confidence"}
    assert body["staged"] == {"entities": 3, "edges": 2}
    assert EntityCandidate.objects.count() == 3


def test_extract_never_tells_whether_a_name_is_already_known(api, other_user):
    # "Looker" is held by an entity drawn from another user's private thought; "dbt" was
    # rejected by a moderator; "Analytics team" waits as a candidate. The answer reads exactly
    # as for names nobody has seen, and nothing is staged twice.
    private = Thought.objects.create(owner=other_user, content="x", is_private=True)
    Entity.objects.create(name="Looker", entity_type="service", source_thought=private)
    api.post(EXTRACT, {"text": "The Analytics team meets."}, format="json")
    Blocklist.objects.create(kind=Blocklist.Kind.ENTITY, item="dbt")
    before = EntityCandidate.objects.count()
    text = "The Analytics team uses dbt and Looker."
    known = api.post(EXTRACT, {"text": text}, format="json").json()
    fresh = api.post(EXTRACT, {"text": "The Orbit team uses Qux and Zarkov."}, format="json")
    assert known["staged"] == fresh.json()["staged"] == {"entities": 3, "edges": 2}
    assert EntityCandidate.objects.count() == before + 3  # Orbit team, Qux, Zarkov only


def test_extract_dry_run_writes_nothing(api):
    resp = api.post(EXTRACT, {"text": "FastAPI uses Pydantic.", "dry_run": True}, format="json")
    assert resp.json()["staged"] == {"entities": 0, "edges": 0}
    assert len(resp.json()["entities"]) == 2
    assert EntityCandidate.objects.count() == EdgeCandidate.objects.count() == 0


def test_extract_cli_failure_then_grok_stages(api, grok):
    grok.chat_fn = lambda messages: json.dumps(
        {
            "entities": [{"id": "e1", "label": "Ledger"}, {"id": "e2", "label": "Kafka"}],
            "edges": [{"from_id": "e1", "to_id": "e2", "relation": "writes_to"}],
        }
    )
    text = "The Ledger writes every settled payment to Kafka."
    resp = api.post(EXTRACT, {"text": text}, format="json")
    assert resp.json()["provider"] == "grok"
    assert resp.json()["staged"] == {"entities": 2, "edges": 1}


def test_extract_with_thought_of_someone_else_is_404(api, other_user):
    thought = ThoughtFactory(owner=other_user)
    resp = api.post(EXTRACT, {"text": "A uses B", "thought_id": str(thought.id)}, format="json")
    assert resp.status_code == 404
    assert resp.json()["error_code"] == "not_found"


def test_extract_with_own_thought_records_it(api, user):
    thought = ThoughtFactory(owner=user)
    api.post(
        EXTRACT, {"text": "FastAPI uses Pydantic.", "thought_id": str(thought.id)}, format="json"
    )
    assert EdgeCandidate.objects.get().staged_by_thought_id == thought.id


def test_extract_bad_input_and_unavailable_chain_are_enveloped(api, settings):
    resp = api.post(EXTRACT, {"dry_run": True}, format="json")
    assert resp.status_code == 400 and resp.json()["fields"]["text"]
    settings.IV_HEURISTIC_FALLBACK = False
    resp = api.post(EXTRACT, {"text": "FastAPI uses Pydantic."}, format="json")
    assert resp.status_code == 503
    assert resp.json()["error_code"] == "extraction_unavailable"


def test_extract_requires_authentication(anon_api):
    assert anon_api.post(EXTRACT, {"text": "x"}, format="json").status_code == 401


def test_entities_list_is_paginated_with_constant_queries(api, django_assert_num_queries):
    for _ in range(5):
        EntityFactory()
    with django_assert_num_queries(3):  # token with its user, count, page
        resp = api.get(reverse("kg-entity-list"), {"limit": 2})
    assert resp.json()["count"] == 5 and len(resp.json()["results"]) == 2


def test_edges_list_has_constant_queries(api, django_assert_num_queries):
    for _ in range(4):
        EdgeFactory()
    with django_assert_num_queries(3):
        resp = api.get("/api/v1/kg/edges/")
    assert resp.json()["results"][0]["source"]["name"]


def test_users_read_but_cannot_write_the_graph(api):
    entity = EntityFactory()
    assert api.get(f"/api/v1/kg/entities/{entity.pk}/").status_code == 200
    assert api.post("/api/v1/kg/entities/", {"name": "X"}, format="json").status_code == 403
    assert api.delete(f"/api/v1/kg/entities/{entity.pk}/").status_code == 403
    assert (
        api.patch(f"/api/v1/kg/entities/{entity.pk}/", {"name": "Y"}, format="json").status_code
        == 403
    )


def test_moderators_create_with_upsert_keys(mod_api):
    first = mod_api.post(
        "/api/v1/kg/entities/", {"name": "Redis", "entity_type": "technology"}, format="json"
    )
    again = mod_api.post(
        "/api/v1/kg/entities/",
        {"name": "redis", "entity_type": "Technology", "description": "cache"},
        format="json",
    )
    assert (first.status_code, again.status_code) == (201, 200)
    assert Entity.objects.get().description == "cache"
    conflict = mod_api.post(
        "/api/v1/kg/entities/", {"name": "Redis", "entity_type": "technology", "upsert": False},
        format="json",
    )  # fmt: skip
    assert conflict.status_code == 409
    other = mod_api.post("/api/v1/kg/entities/", {"name": "Kafka"}, format="json").json()
    payload = {"source_id": first.json()["id"], "target_id": other["id"], "rel_type": "feeds"}
    assert mod_api.post("/api/v1/kg/edges/", payload, format="json").status_code == 201
    assert mod_api.post("/api/v1/kg/edges/", payload, format="json").status_code == 200
    assert Edge.objects.count() == 1
    obs = {"name": "Redis is fast", "entity_id": first.json()["id"]}
    assert mod_api.post("/api/v1/kg/observations/", obs, format="json").status_code == 201
    assert mod_api.post("/api/v1/kg/observations/", obs, format="json").status_code == 200
    renamed = mod_api.patch(
        f"/api/v1/kg/entities/{other['id']}/", {"name": "Apache Kafka"}, format="json"
    )
    assert renamed.json()["name"] == "Apache Kafka"
    assert mod_api.delete(f"/api/v1/kg/entities/{other['id']}/").status_code == 204


def test_moderators_update_observations_and_edges_and_users_cannot(mod_api, api):
    edge = EdgeFactory(rel_type="uses")
    EdgeFactory(source=edge.source, target=edge.target, rel_type="calls")
    url = f"/api/v1/kg/edges/{edge.pk}/"
    assert api.patch(url, {"confidence": 0.5}, format="json").status_code == 403
    resp = mod_api.patch(url, {"confidence": 0.5, "rel_type": "Depends On"}, format="json")
    assert resp.status_code == 200 and resp.json()["rel_type"] == "depends_on"
    assert resp.json()["confidence"] == 0.5
    clash = mod_api.patch(url, {"rel_type": "calls"}, format="json")
    assert clash.status_code == 409
    obs = mod_api.post("/api/v1/kg/observations/", {"name": "slow"}, format="json").json()
    obs_url = f"/api/v1/kg/observations/{obs['id']}/"
    changed = mod_api.patch(
        obs_url, {"description": "p99 over 2s", "entity_id": edge.source_id}, format="json"
    ).json()
    assert changed["description"] == "p99 over 2s" and changed["entity_id"] == edge.source_id
    assert api.patch(obs_url, {"description": "x"}, format="json").status_code == 403
    assert mod_api.delete(obs_url).status_code == 204


def test_neighbors_depth_one_and_two(api):
    a, b, c = EntityFactory(name="A"), EntityFactory(name="B"), EntityFactory(name="C")
    EdgeFactory(source=a, target=b)
    EdgeFactory(source=b, target=c)
    one = api.get(f"/api/v1/kg/entities/{a.pk}/neighbors/").json()
    two = api.get(f"/api/v1/kg/entities/{a.pk}/neighbors/", {"depth": 2}).json()
    assert [n["name"] for n in one["nodes"]] == ["B"]
    assert [n["name"] for n in two["nodes"]] == ["B", "C"] and len(two["edges"]) == 2
    bad = api.get(f"/api/v1/kg/entities/{a.pk}/neighbors/", {"depth": 3})
    assert bad.status_code == 400
    assert bad.json()["fields"] == {"depth": ["Must be 1 or 2."]}  # messages in a list, as always
    typo = api.get(f"/api/v1/kg/entities/{a.pk}/neighbors/", {"dept": 2})
    assert typo.status_code == 400
    assert typo.json()["fields"] == {"dept": ["Unknown field. Did you mean depth?"]}


def test_semantic_search_finds_embedded_entities(mod_api, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        mod_api.post("/api/v1/kg/entities/", {"name": "payment gateway"}, format="json")
        mod_api.post("/api/v1/kg/entities/", {"name": "garden roses"}, format="json")
    hits = mod_api.get("/api/v1/kg/search/", {"q": "payment gateway", "top_k": 1}).json()
    assert hits[0]["name"] == "payment gateway" and hits[0]["kind"] == "entity"


def test_semantic_search_skips_vectors_of_another_model(mod_api):
    # The same 384-d vector, stored under another model's name (before ``reembed``), is not
    # comparable to the query: only the row embedded by the current model is found.
    provider = get_provider()
    vector = provider.embed(["payment gateway"])[0]
    EntityFactory(name="old", **fields_for(provider, vector) | {"embedding_model": "older-384"})
    EntityFactory(name="current", **fields_for(provider, vector))
    hits = mod_api.get("/api/v1/kg/search/", {"q": "payment gateway", "top_k": 5}).json()
    assert [hit["name"] for hit in hits] == ["current"]


def test_candidates_endpoints_are_for_moderators_only(api, anon_api):
    assert api.get(reverse("kg-candidate-list")).status_code == 403
    decide = {"items": [{"id": 1, "kind": "entity", "decision": "approve"}]}
    assert api.post("/api/v1/kg/candidates/decide", decide, format="json").status_code == 403
    assert anon_api.get(reverse("kg-candidate-list")).status_code == 401


def test_candidates_list_filters(mod_api, django_assert_num_queries):
    EntityCandidateFactory(confidence=0.9)
    EntityCandidateFactory(confidence=0.3)
    EntityCandidateFactory(status="rejected")
    EdgeCandidateFactory(confidence=0.95)
    with django_assert_num_queries(9):  # token, 2 permission, 3 counts, 3 pages (3 kinds)
        body = mod_api.get(reverse("kg-candidate-list"), {"min_conf": 0.5}).json()
    assert body["count"] == 2
    assert {r["kind"] for r in body["results"]} == {"entity", "edge"}
    only = mod_api.get(reverse("kg-candidate-list"), {"target": "relationship"}).json()
    assert [r["kind"] for r in only["results"]] == ["edge"]
    rejected = mod_api.get(reverse("kg-candidate-list"), {"status": "rejected"}).json()
    assert rejected["count"] == 1
    paged = mod_api.get(reverse("kg-candidate-list"), {"limit": 1, "offset": 1}).json()
    assert paged["count"] == 3 and len(paged["results"]) == 1
    assert mod_api.get(reverse("kg-candidate-list"), {"target": "x"}).status_code == 400


def test_candidates_review_suggests_canonical_entities(mod_api):
    EntityFactory(name="PostgreSQL", entity_type="technology")
    EntityFactory(name="Tulips", entity_type="concept")
    EntityCandidateFactory(name="Postgres", entity_type="technology")
    body = mod_api.get(reverse("kg-candidate-list"), {"suggest": "true"}).json()
    suggestions = body["results"][0]["suggestions"]
    assert suggestions and suggestions[0]["name"] == "PostgreSQL"
    assert len(suggestions) <= 3


def test_decide_over_http_with_dry_run_and_per_item_results(mod_api, moderator):
    cand = EntityCandidateFactory(name="Redis")
    edge = EdgeCandidateFactory(source_name="Redis", target_name="Nowhere")
    items = [
        {"id": cand.pk, "kind": "entity", "decision": "approve", "note": "ok"},
        {"id": edge.pk, "kind": "relationship", "decision": "approve"},
    ]
    dry = mod_api.post(
        "/api/v1/kg/candidates/decide", {"items": items, "dry_run": True}, format="json"
    )
    assert dry.status_code == 200 and dry.json()["dry_run"] is True
    assert Entity.objects.count() == 0
    body = mod_api.post("/api/v1/kg/candidates/decide", {"items": items}, format="json").json()
    ok, failed = body["results"]
    assert ok["ok"] and ok["status"] == "approved" and ok["promoted_id"]
    assert not failed["ok"] and "target entity 'Nowhere'" in failed["detail"]
    cand.refresh_from_db()
    assert cand.reviewed_by == moderator and cand.review_note == "ok"


def test_decide_rejects_bad_items(mod_api):
    bad = {"items": [{"id": 1, "kind": "entity", "decision": "alias"}]}
    resp = mod_api.post("/api/v1/kg/candidates/decide", bad, format="json")
    assert resp.status_code == 400 and resp.json()["error_code"] == "invalid"
    assert (
        mod_api.post("/api/v1/kg/candidates/decide", {"items": []}, format="json").status_code
        == 400
    )


def test_api_root_links_kg_collections(api):
    body = api.get("/api/v1/").json()
    assert body["kg_entities"].endswith("/api/v1/kg/entities/")
    assert body["kg_candidates"].endswith("/api/v1/kg/candidates/")


def test_memories_from_a_private_thought_stay_with_its_owner(api, other_api, user, moderator):
    """Entities, observations and edges drawn from alice's private thought reach no one else:
    not the lists, not retrieve (404), not neighbours, not semantic search, not a moderator."""
    from kg.models import Observation
    from kg.services import entity_embed, observation_embed

    private = ThoughtFactory(owner=user, is_private=True, content="my private diagnosis")
    public = ThoughtFactory(owner=user, is_private=False)
    shared = EntityFactory(name="Shared hub")
    secret = EntityFactory(name="Secret clinic", source_thought=private)
    note = Observation.objects.create(
        name="Secret clinic visit", description="the diagnosis", source_thought=private
    )
    EdgeFactory(source=shared, target=secret, rel_type="visits", source_thought=public)
    hidden_edge = EdgeFactory(
        source=shared, target=EntityFactory(name="Open thing"), source_thought=private
    )
    entity_embed(entity_id=secret.pk)
    entity_embed(entity_id=shared.pk)
    observation_embed(observation_id=note.pk)

    mod_api = client_for(moderator)
    for client, sees in ((api, True), (other_api, False), (mod_api, False)):
        names = {e["name"] for e in client.get("/api/v1/kg/entities/").json()["results"]}
        assert ("Secret clinic" in names) is sees
        obs = {o["name"] for o in client.get("/api/v1/kg/observations/").json()["results"]}
        assert ("Secret clinic visit" in obs) is sees
        edges = {e["id"] for e in client.get("/api/v1/kg/edges/").json()["results"]}
        assert (hidden_edge.pk in edges) is sees
        detail = client.get(f"/api/v1/kg/entities/{secret.pk}/")
        assert detail.status_code == (200 if sees else 404)
        around = client.get(f"/api/v1/kg/entities/{shared.pk}/neighbors/").json()
        assert ("Secret clinic" in {n["name"] for n in around["nodes"]}) is sees
        # An edge into a hidden entity is hidden too, even from a public thought.
        assert (len(around["edges"]) == 2) is sees
        hits = client.get("/api/v1/kg/search/", {"q": "Secret clinic", "top_k": 10}).json()
        assert ({"Secret clinic", "Secret clinic visit"} <= {h["name"] for h in hits}) is sees
        assert not sees or {h["name"] for h in hits} >= {"Secret clinic"}
    # bob still finds the shared entity: the rule hides rows, not the whole graph.
    assert "Shared hub" in {
        h["name"] for h in other_api.get("/api/v1/kg/search/", {"q": "hub"}).json()
    }
