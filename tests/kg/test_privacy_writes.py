"""KG writes and moderation never reach a memory the writer cannot see.

alice owns a private thought; "Quillport" (concept) is an entity drawn from it, so only alice
sees it. The moderator writes the graph and decides candidates, but must neither receive, nor
modify, nor point at that entity: every answer reads as if it were not there, except the bare
409 that the database's global name constraint makes unavoidable.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from django.contrib.auth.models import User
from django.urls import reverse

from kg.models import Edge, Entity, EntityCandidate, Observation
from kg.services import observation_upsert
from legacymind.errors import Conflict
from tests.kg.factories import (
    EdgeCandidateFactory,
    EntityCandidateFactory,
    EntityFactory,
    ThoughtFactory,
)

pytestmark = pytest.mark.django_db
ENTITIES = "/api/v1/kg/entities/"
EDGES = "/api/v1/kg/edges/"
OBSERVATIONS = "/api/v1/kg/observations/"
DECIDE = "/api/v1/kg/candidates/decide"
MISSING = 987_654


@pytest.fixture
def hidden(user: User) -> Entity:
    private = ThoughtFactory(owner=user, is_private=True, content="my private plans")
    return EntityFactory(
        name="Quillport", entity_type="concept", description="secret", source_thought=private
    )


def unchanged(entity: Entity) -> None:
    before = (entity.description, entity.data, entity.aliases, entity.updated_at)
    entity.refresh_from_db()
    assert (entity.description, entity.data, entity.aliases, entity.updated_at) == before


# Finding 1: the upsert of an entity whose name a hidden entity holds.


@pytest.mark.parametrize("upsert", [True, False])
def test_upserting_the_name_of_a_hidden_entity_is_a_bare_conflict(mod_api, hidden, upsert):
    body = {"name": "quillport", "entity_type": "Concept", "description": "x", "upsert": upsert}
    body |= {"aliases": ["QP"], "data": {"k": 1}}
    response = mod_api.post(ENTITIES, body, format="json")
    assert response.status_code == 409, response.content
    answer = response.json()
    assert answer["error_code"] == "conflict" and answer["fields"] == {}
    assert answer["detail"] == (
        "entity 'quillport' (concept) cannot be written: the name is already in use; "
        "choose another name or entity_type"
    )
    text = response.content.decode()
    assert str(hidden.source_thought_id) not in text and "secret" not in text
    unchanged(hidden)


def test_a_visible_entity_still_upserts_and_its_owner_keeps_a_private_one(
    moderator, mod_api, hidden
):
    mine = ThoughtFactory(owner=moderator, is_private=True)
    body = {"name": "Harbour", "source_thought_id": str(mine.pk)}
    assert mod_api.post(ENTITIES, body, format="json").status_code == 201
    again = mod_api.post(ENTITIES, {"name": "harbour", "description": "d"}, format="json")
    assert again.status_code == 200 and again.json()["description"] == "d"
    conflict = mod_api.post(ENTITIES, {"name": "Harbour", "upsert": False}, format="json")
    assert conflict.status_code == 409 and conflict.json()["fields"] == {"id": again.json()["id"]}


def test_renaming_onto_a_hidden_entity_does_not_echo_its_stored_name(mod_api, hidden):
    mine = EntityFactory(name="Harbour", entity_type="concept")
    response = mod_api.patch(f"{ENTITIES}{mine.pk}/", {"name": "QUILLPORT"}, format="json")
    assert response.status_code == 409
    assert "'Quillport'" not in response.json()["detail"]
    assert response.json()["fields"] == {}


def test_observation_upsert_never_updates_a_hidden_observation(moderator, user):
    private = ThoughtFactory(owner=user, is_private=True)
    theirs = Observation.objects.create(name="note", description="secret", source_thought=private)
    with pytest.raises(Conflict) as raised:
        observation_upsert(
            name="note", description="overwrite", source_thought_id=private.pk, viewer=moderator
        )
    assert raised.value.fields == {}
    theirs.refresh_from_db()
    assert theirs.description == "secret"
    obs, created = observation_upsert(
        name="note", description="mine", source_thought_id=private.pk, viewer=user
    )
    assert (obs.pk, created, obs.description) == (theirs.pk, False, "mine")


# Finding 2: related entities must be visible to the writer.


def does_not_exist(response: Any, field: str, pk: int) -> str:
    # A well-formed id that names no row the writer may see is a 404 naming the field (the
    # schema cannot say which ids exist, so a 400 would refuse schema-valid input).
    assert response.status_code == 404, response.content
    body = response.json()
    assert body["error_code"] == "not_found"
    message = body["fields"][field][0]
    # The words DRF gives a missing id, so a hidden id reads exactly like one that is not there.
    assert message == f'Invalid pk "{pk}" - object does not exist.'
    return message


@pytest.mark.parametrize("field", ["source_id", "target_id"])
def test_an_edge_to_a_hidden_entity_is_refused_like_a_missing_one(mod_api, hidden, field):
    shown = EntityFactory(name="Open")
    for pk in (hidden.pk, MISSING):
        body = {"source_id": shown.pk, "target_id": shown.pk, "rel_type": "near", field: pk}
        response = mod_api.post(EDGES, body, format="json")
        does_not_exist(response, field, pk)
        assert "Quillport" not in response.content.decode()
    assert not Edge.objects.exists()


def test_an_observation_on_a_hidden_entity_is_refused_like_a_missing_one(mod_api, hidden):
    for pk in (hidden.pk, MISSING):
        does_not_exist(
            mod_api.post(OBSERVATIONS, {"name": "n", "entity_id": pk}, format="json"),
            "entity_id",
            pk,
        )
    assert not Observation.objects.exists()
    obs = Observation.objects.create(name="kept")
    for pk in (hidden.pk, MISSING):
        does_not_exist(
            mod_api.patch(f"{OBSERVATIONS}{obs.pk}/", {"entity_id": pk}, format="json"),
            "entity_id",
            pk,
        )
    obs.refresh_from_db()
    assert obs.entity_id is None


def test_upserting_the_triple_of_a_hidden_edge_is_a_bare_conflict(mod_api, user):
    private = ThoughtFactory(owner=user, is_private=True)
    a, b = EntityFactory(name="A"), EntityFactory(name="B")
    theirs = Edge.objects.create(
        source=a, target=b, rel_type="near", confidence=0.3, source_thought=private
    )
    body = {"source_id": a.pk, "target_id": b.pk, "rel_type": "Near", "confidence": 0.9}
    response = mod_api.post(EDGES, body, format="json")
    assert response.status_code == 409 and response.json()["fields"] == {}
    assert str(private.pk) not in response.content.decode()
    theirs.refresh_from_db()
    assert theirs.confidence == 0.3


def test_a_self_edge_is_a_clear_400_and_not_stored(mod_api):
    one = EntityFactory(name="Loop")
    body = {"source_id": one.pk, "target_id": one.pk, "rel_type": "near"}
    response = mod_api.post(EDGES, body, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["fields"] == {
        "target_id": ["An edge joins two different entities; target_id equals source_id."]
    }
    assert not Edge.objects.exists()


# Finding 3: suggestions and alias targets in the moderation queue.


def test_the_queue_never_suggests_a_hidden_entity(mod_api, hidden):
    EntityFactory(name="Quillport docks", entity_type="concept")
    EntityCandidateFactory(name="Quillport", entity_type="concept")
    body = mod_api.get(reverse("kg-candidate-list"), {"suggest": "true"}).json()
    suggested = {s["id"] for s in body["results"][0]["suggestions"]}
    assert hidden.pk not in suggested and suggested  # the visible one is still suggested


@pytest.mark.parametrize("dry_run", [True, False])
def test_an_alias_to_a_hidden_entity_fails_like_a_missing_one(mod_api, hidden, dry_run):
    cand = EntityCandidateFactory(name="Quilport", entity_type="concept")
    details = []
    for pk in (hidden.pk, MISSING):
        item = {"id": cand.pk, "kind": "entity", "decision": "alias", "canonical_id": pk}
        response = mod_api.post(DECIDE, {"items": [item], "dry_run": dry_run}, format="json")
        (outcome,) = response.json()["results"]
        assert not outcome["ok"] and outcome["promoted_id"] is None
        details.append(outcome["detail"].replace(str(pk), "<id>"))
    assert details[0] == details[1] == "canonical entity <id> does not exist"
    cand.refresh_from_db()
    assert cand.status == "pending"
    unchanged(hidden)


def test_the_admin_review_page_neither_suggests_nor_aliases_a_hidden_entity(mod_client, user):
    private = ThoughtFactory(owner=user, is_private=True)
    hidden = EntityFactory(name="Quillport harbour", entity_type="concept", source_thought=private)
    EntityFactory(name="Quillport docks", entity_type="concept")
    cand = EntityCandidateFactory(name="Quillport", entity_type="concept")
    url = reverse("admin:kg_entitycandidate_review", args=[cand.pk])
    html = mod_client.get(url).content.decode()
    assert "Quillport docks" in html and "Quillport harbour" not in html
    answer = mod_client.post(url, {"decision": "alias", "canonical_id": hidden.pk}, follow=True)
    assert f"Canonical entity {hidden.pk} does not exist" in answer.content.decode()
    cand.refresh_from_db()
    hidden.refresh_from_db()
    assert cand.status == "pending" and hidden.aliases == []


# Finding 4: deleting candidates needs the delete permission.


def test_moderators_without_delete_permission_cannot_delete_candidates(mod_client, moderator):
    cand = EntityCandidateFactory()
    changelist = reverse("admin:kg_entitycandidate_changelist")
    assert "delete_selected" not in mod_client.get(changelist).content.decode()
    mod_client.post(
        changelist, {"action": "delete_selected", "_selected_action": [cand.pk], "post": "yes"}
    )
    delete = mod_client.post(reverse("admin:kg_entitycandidate_delete", args=[cand.pk]))
    assert delete.status_code == 403
    assert EntityCandidate.objects.filter(pk=cand.pk).exists()
    moderator.is_superuser = True
    moderator.save(update_fields=["is_superuser"])
    mod_client.post(
        changelist, {"action": "delete_selected", "_selected_action": [cand.pk], "post": "yes"}
    )
    assert not EntityCandidate.objects.filter(pk=cand.pk).exists()


# Finding 5: the candidates list pages like every other list.


def test_candidates_list_pages_like_the_other_lists(mod_api):
    EntityCandidateFactory.create_batch(203)
    body = mod_api.get(reverse("kg-candidate-list"), {"limit": 1000}).json()
    assert set(body) == {"count", "next", "previous", "results"}
    assert body["count"] == 203 and len(body["results"]) == 200
    assert "offset=200" in body["next"] and body["previous"] is None
    last = mod_api.get(reverse("kg-candidate-list"), {"limit": 2, "offset": 202}).json()
    assert len(last["results"]) == 1 and last["next"] is None and "offset=200" in last["previous"]
    bad = mod_api.get(reverse("kg-candidate-list"), {"limit": 0})
    assert bad.status_code == 400 and "limit" in bad.json()["fields"]


def test_candidates_schema_documents_the_shared_page(anon_api):
    schema = yaml.safe_load(anon_api.get("/api/schema/").content)
    operation = schema["paths"]["/api/v1/kg/candidates/"]["get"]
    params = {p["name"]: p for p in operation["parameters"]}
    assert "maximum" not in params["limit"]["schema"]
    assert "above 200 gives 200" in params["limit"]["description"]
    ref = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    page = schema["components"]["schemas"][ref.rsplit("/", 1)[1]]
    assert set(page["properties"]) == {"count", "next", "previous", "results"}


# Finding 6: a dry run does not invent the id a real run would assign.


def test_a_dry_run_reports_no_id_for_a_row_it_would_create(mod_api):
    cand = EntityCandidateFactory(name="Redis")
    item = {"id": cand.pk, "kind": "entity", "decision": "approve"}
    dry = mod_api.post(DECIDE, {"items": [item], "dry_run": True}, format="json").json()
    (outcome,) = dry["results"]
    assert outcome["ok"] and outcome["promoted_id"] is None
    assert outcome["detail"] == "dry run: created entity 'Redis' (technology)"
    real = mod_api.post(DECIDE, {"items": [item]}, format="json").json()["results"][0]
    assert real["promoted_id"] == Entity.objects.get(name="Redis").pk


# Approving a candidate whose name a hidden entity holds.


def approve(mod_api: Any, cand: EntityCandidate) -> dict[str, Any]:
    item = {"id": cand.pk, "kind": "entity", "decision": "approve"}
    response = mod_api.post(DECIDE, {"items": [item]}, format="json")
    assert response.status_code == 200, response.content
    (outcome,) = response.json()["results"]
    return outcome


def test_approving_a_name_a_hidden_entity_holds_is_refused_without_naming_it(mod_api, hidden):
    cand = EntityCandidateFactory(
        name="Quillport", entity_type="concept", aliases=["QP"], staged_by_thought=ThoughtFactory()
    )
    outcome = approve(mod_api, cand)
    assert not outcome["ok"] and outcome["promoted_id"] is None
    assert outcome["detail"] == (
        f"entity candidate {cand.pk}: the name 'Quillport' (concept) is taken by a memory you "
        "cannot see; alias the candidate or reject it"
    )  # the whole text: no id, description or owner of the hidden entity
    cand.refresh_from_db()
    assert cand.status == "pending" and cand.promoted_id is None
    unchanged(hidden)  # no alias from someone else's mention


def test_the_owners_own_mention_still_reaches_their_private_entity(mod_api, hidden, user):
    again = ThoughtFactory(owner=user, is_private=True, content="Quillport again")
    cand = EntityCandidateFactory(
        name="Quillport", entity_type="concept", aliases=["QP"], staged_by_thought=again
    )
    outcome = approve(mod_api, cand)
    assert outcome["ok"] and outcome["promoted_id"] is None  # the moderator learns no id
    assert outcome["detail"] == "reused an entity 'Quillport' (concept) its owner keeps private"
    cand.refresh_from_db()
    hidden.refresh_from_db()
    assert cand.status == "approved" and cand.promoted_id == hidden.pk
    assert hidden.aliases == ["QP"]


# Names read in a private thought never join a shared entity.


def test_approving_a_private_mention_of_a_shared_entity_adds_none_of_its_names(
    mod_api, other_api, user
):
    shared = EntityFactory(name="Bob", entity_type="person")
    private = ThoughtFactory(owner=user, is_private=True, content="Bob, my secret lover")
    cand = EntityCandidateFactory(
        name="Bob", entity_type="person", aliases=["My Secret Lover Bob"], staged_by_thought=private
    )
    outcome = approve(mod_api, cand)
    assert outcome["ok"] and outcome["promoted_id"] == shared.pk
    shared.refresh_from_db()
    assert shared.aliases == []
    seen = other_api.get(f"{ENTITIES}{shared.pk}/").json()
    assert "Secret" not in str(seen)


def test_a_private_mention_cannot_become_an_alias_of_a_shared_entity(mod_api, user):
    shared = EntityFactory(name="Robert", entity_type="person")
    private = ThoughtFactory(owner=user, is_private=True)
    cand = EntityCandidateFactory(name="Lover Bob", entity_type="person", staged_by_thought=private)
    item = {"id": cand.pk, "kind": "entity", "decision": "alias", "canonical_id": shared.pk}
    (outcome,) = mod_api.post(DECIDE, {"items": [item]}, format="json").json()["results"]
    assert not outcome["ok"]
    assert "comes from a private thought" in outcome["detail"]
    shared.refresh_from_db()
    cand.refresh_from_db()
    assert shared.aliases == [] and cand.status == "pending"


def test_a_shared_mention_still_adds_its_names_to_the_shared_entity(mod_api):
    shared = EntityFactory(name="Robert", entity_type="person")
    cand = EntityCandidateFactory(
        name="Robert", entity_type="person", aliases=["Bob"], staged_by_thought=ThoughtFactory()
    )
    assert approve(mod_api, cand)["ok"]
    alias = EntityCandidateFactory(name="Rob", entity_type="person", staged_by_thought=None)
    item = {"id": alias.pk, "kind": "entity", "decision": "alias", "canonical_id": shared.pk}
    (outcome,) = mod_api.post(DECIDE, {"items": [item]}, format="json").json()["results"]
    assert outcome["ok"], outcome
    shared.refresh_from_db()
    assert shared.aliases == ["Bob", "Rob"]


def approve_edge(mod_api: Any, cand: Any) -> dict[str, Any]:
    item = {"id": cand.pk, "kind": "edge", "decision": "approve"}
    (outcome,) = mod_api.post(DECIDE, {"items": [item]}, format="json").json()["results"]
    return outcome


def test_an_edge_candidate_never_resolves_to_someone_elses_hidden_entity(mod_api, hidden):
    EntityFactory(name="Harbour", entity_type="place")
    details = []
    for name in ("Quillport", "Nowhere"):  # hidden, then missing: the same answer
        cand = EdgeCandidateFactory(
            source_name="Harbour", target_name=name, rel_type="near",
            staged_by_thought=ThoughtFactory(),
        )  # fmt: skip
        outcome = approve_edge(mod_api, cand)
        assert not outcome["ok"]
        details.append(outcome["detail"].replace(str(cand.pk), "<id>").replace(name, "<name>"))
    assert details[0] == details[1]
    assert not Edge.objects.exists()


def test_the_authors_own_edge_candidate_still_reaches_their_private_entity(mod_api, hidden, user):
    EntityFactory(name="Harbour", entity_type="place")
    again = ThoughtFactory(owner=user, is_private=True)
    cand = EdgeCandidateFactory(
        source_name="Harbour", target_name="Quillport", rel_type="near", staged_by_thought=again
    )
    outcome = approve_edge(mod_api, cand)
    assert outcome["ok"], outcome
    edge = Edge.objects.get()
    assert edge.target_id == hidden.pk and edge.source_thought_id == again.pk


def test_the_queue_says_which_candidates_come_from_a_private_thought(mod_api, user):
    private = ThoughtFactory(owner=user, is_private=True)
    EntityCandidateFactory(name="Hidden source", staged_by_thought=private)
    EntityCandidateFactory(name="Shared source", staged_by_thought=ThoughtFactory())
    EdgeCandidateFactory(staged_by_thought=private)
    EntityCandidateFactory(name="No source", staged_by_thought=None)
    rows = mod_api.get("/api/v1/kg/candidates/", {"target": "mixed"}).json()["results"]
    flags = {r.get("name") or r["kind"]: r["from_private_thought"] for r in rows}
    assert flags == {
        "Hidden source": True,
        "Shared source": False,
        "No source": False,
        "edge": True,
    }
    assert all("my private" not in str(r) for r in rows)
