"""Observations staged for the moderators (a non-moderator's, through MCP): staging, the three
decisions, and the queue that lists them, through the real services and endpoints."""

from __future__ import annotations

import pytest
from django.urls import reverse

from kg.models import CandidateStatus, Entity, Observation, ObservationCandidate
from kg.selectors import candidates_list
from kg.services import (
    DecisionError,
    DecisionItem,
    StagedObservation,
    candidate_decide,
    candidates_decide,
    stage_observations,
)
from tests.kg.factories import EntityCandidateFactory, EntityFactory, ThoughtFactory

pytestmark = pytest.mark.django_db


def _stage(*observations: StagedObservation, thought_id=None) -> int:
    return stage_observations(
        observations=list(observations), origin="mcp:1", thought_id=thought_id
    )


def test_staging_writes_one_pending_candidate_per_identity():
    ledger = EntityFactory(name="Ledger")
    obs = StagedObservation("Ledger: nightly", "nightly", "Ledger", ledger.pk, confidence=0.7)
    assert _stage(obs, StagedObservation(" ledger:  NIGHTLY ", "again", "LEDGER")) == 1
    cand = ObservationCandidate.objects.get()
    assert (cand.status, cand.origin, cand.entity_id) == ("pending", "mcp:1", ledger.pk)
    assert (cand.name, cand.description, cand.confidence) == ("Ledger: nightly", "nightly", 0.7)
    assert _stage(obs) == 0  # already pending


def test_approval_creates_the_observation_of_its_entity(moderator):
    ledger = EntityFactory(name="Ledger")
    thought = ThoughtFactory(owner=moderator)
    _stage(
        StagedObservation("Ledger: nightly", "nightly", "Ledger", ledger.pk), thought_id=thought.pk
    )
    cand = ObservationCandidate.objects.get()
    outcome = candidate_decide(
        kind="observation", candidate_id=cand.pk, decision="approve", reviewer=moderator
    )
    obs = Observation.objects.get()
    assert (obs.name, obs.description, obs.entity_id) == ("Ledger: nightly", "nightly", ledger.pk)
    assert obs.source_thought_id == thought.pk
    assert outcome.promoted_id == obs.pk and "created observation" in outcome.detail
    cand.refresh_from_db()
    assert (cand.status, cand.promoted_id, cand.reviewed_by) == ("approved", obs.pk, moderator)
    assert _stage(StagedObservation("Ledger: nightly", "nightly", "Ledger")) == 0  # in the graph


def test_an_observation_of_a_pending_entity_waits_for_that_entity(moderator):
    entity = EntityCandidateFactory(name="Ferry", entity_type="place")
    _stage(StagedObservation("Ferry: leaves at six", "leaves at six", "Ferry"))
    cand = ObservationCandidate.objects.get()
    with pytest.raises(DecisionError, match="entity 'Ferry' does not exist; approve or create"):
        candidate_decide(
            kind="observation", candidate_id=cand.pk, decision="approve", reviewer=moderator
        )
    # In one call, the entity is decided first, so its observation finds it.
    outcomes = candidates_decide(
        items=[
            DecisionItem(cand.pk, "observation", "approve"),
            DecisionItem(entity.pk, "entity", "approve"),
        ],
        reviewer=moderator,
    )
    assert [o.ok for o in outcomes] == [True, True]
    assert Observation.objects.get().entity == Entity.objects.get(name="Ferry")


def test_rejection_is_remembered_and_alias_is_refused(moderator):
    _stage(StagedObservation("Ledger: noise", "noise", "Ledger"))
    cand = ObservationCandidate.objects.get()
    (alias,) = candidates_decide(
        items=[DecisionItem(cand.pk, "observation", "alias", canonical_id=1)], reviewer=moderator
    )
    assert not alias.ok and "only entity candidates can be aliased" in alias.detail
    assert alias.status == "pending"
    candidate_decide(
        kind="observation", candidate_id=cand.pk, decision="reject", reviewer=moderator
    )
    cand.refresh_from_db()
    assert cand.status == CandidateStatus.REJECTED
    assert _stage(StagedObservation("Ledger: noise", "noise", "Ledger")) == 0
    assert not Observation.objects.exists()


def test_approval_never_attaches_to_an_entity_the_moderator_cannot_see(moderator, other_user):
    hidden = EntityFactory(
        name="Diary", source_thought=ThoughtFactory(owner=other_user, is_private=True)
    )
    _stage(StagedObservation("Diary: secret", "secret", "Diary", hidden.pk))
    cand = ObservationCandidate.objects.get()
    (outcome,) = candidates_decide(
        items=[DecisionItem(cand.pk, "observation", "approve")], reviewer=moderator
    )
    assert not outcome.ok and "does not exist" in outcome.detail
    assert not Observation.objects.exists()


def test_the_queue_lists_observations_with_the_other_kinds(mod_api):
    EntityCandidateFactory(name="Ferry")
    _stage(StagedObservation("Ferry: leaves at six", "leaves at six", "Ferry"))
    assert {candidate.__class__.__name__ for candidate in candidates_list().rows} == {
        "EntityCandidate",
        "ObservationCandidate",
    }
    body = mod_api.get(reverse("kg-candidate-list"), {"target": "observation"}).json()
    (row,) = body["results"]
    assert (row["kind"], row["entity_name"], row["description"]) == (
        "observation",
        "Ferry",
        "leaves at six",
    )
    decide = {"items": [{"id": row["id"], "kind": "observation", "decision": "reject"}]}
    result = mod_api.post(reverse("kg-candidate-decide"), decide, format="json").json()
    assert result["results"][0]["status"] == "rejected"


def test_the_admin_lists_and_reviews_observation_candidates(mod_client):
    _stage(StagedObservation("Ferry: leaves at six", "leaves at six", "Ferry"))
    cand = ObservationCandidate.objects.get()
    listed = mod_client.get(reverse("admin:kg_observationcandidate_changelist"))
    assert listed.status_code == 200 and b"leaves at six" in listed.content
    review = mod_client.get(reverse("admin:kg_observationcandidate_review", args=[cand.pk]))
    assert review.status_code == 200 and b"Ferry: leaves at six" in review.content
