"""Staging and moderation through the services."""

from __future__ import annotations

import pytest

from kg.extraction import ExtractedEdge, ExtractedEntity, Extraction
from kg.models import Blocklist, CandidateStatus, Edge, EdgeCandidate, Entity, EntityCandidate
from kg.services import (
    DecisionError,
    DecisionItem,
    candidate_decide,
    candidates_decide,
    stage_extraction,
    text_extract,
)
from tests.kg.factories import (
    EdgeCandidateFactory,
    EntityCandidateFactory,
    EntityFactory,
    ThoughtFactory,
)
from thoughts.services import thought_extract

pytestmark = pytest.mark.django_db


def extraction(*names: str, edges: tuple[tuple[str, str, str], ...] = ()) -> Extraction:
    return Extraction(
        "cli",
        "gemini-test",
        [ExtractedEntity(n, "technology", 0.9) for n in names],
        [ExtractedEdge(s, t, r, 0.8) for s, t, r in edges],
        prompt_hash="a" * 64,
    )


def test_staging_writes_pending_candidates_with_provenance():
    thought = ThoughtFactory()
    counts = stage_extraction(
        extraction=extraction("Redis", "Kafka", edges=(("Redis", "Kafka", "feeds"),)),
        origin="inner_voice",
        thought_id=thought.id,
    )
    assert (counts.entities, counts.edges) == (2, 1)
    cand = EntityCandidate.objects.get(name="Redis")
    assert cand.status == CandidateStatus.PENDING
    assert cand.origin == "inner_voice"
    assert cand.staged_by_thought_id == thought.id
    assert (cand.provider, cand.model, cand.prompt_hash) == ("cli", "gemini-test", "a" * 64)
    assert EdgeCandidate.objects.get().source_name == "Redis"


def test_staging_skips_pending_approved_and_existing_identities():
    stage_extraction(
        extraction=extraction("Redis", edges=(("Redis", "Kafka", "feeds"),)), origin="x"
    )
    EntityFactory(name="Kafka", entity_type="technology")
    again = stage_extraction(
        extraction=extraction(" redis ", "KAFKA", edges=(("redis", "kafka", "feeds"),)), origin="x"
    )
    assert (again.entities, again.edges) == (0, 0)
    assert EntityCandidate.objects.count() == 1


def test_rejected_items_go_on_the_blocklist_and_are_never_proposed_again(moderator):
    stage_extraction(extraction=extraction("The", edges=(("The", "Redis", "uses"),)), origin="x")
    cand = EntityCandidate.objects.get(name="The")
    candidate_decide(
        kind="entity", candidate_id=cand.pk, decision="reject", reviewer=moderator, note="noise"
    )
    assert Blocklist.objects.filter(kind="entity", item="the").exists()
    counts = stage_extraction(
        extraction=extraction("the", "Redis", edges=(("the", "Redis", "uses"),)), origin="x"
    )
    assert (counts.entities, counts.edges) == (1, 0)  # only Redis; no edge touching "the"
    cand.refresh_from_db()
    assert (cand.status, cand.reviewed_by, cand.review_note) == ("rejected", moderator, "noise")
    assert cand.reviewed_at is not None


def test_approving_twice_never_duplicates_the_entity(moderator, django_capture_on_commit_callbacks):
    first = EntityCandidateFactory(name="Redis", entity_type="technology")
    second = EntityCandidateFactory(name="redis", entity_type="Technology")
    with django_capture_on_commit_callbacks(execute=True):
        one = candidate_decide(
            kind="entity", candidate_id=first.pk, decision="approve", reviewer=moderator
        )
    again = candidate_decide(
        kind="entity", candidate_id=first.pk, decision="approve", reviewer=moderator
    )
    other = candidate_decide(
        kind="entity", candidate_id=second.pk, decision="approve", reviewer=moderator
    )
    assert Entity.objects.count() == 1
    assert one.promoted_id == again.promoted_id == other.promoted_id
    assert again.detail == "already approved"
    entity = Entity.objects.get()
    assert entity.entity_type == "technology"
    assert entity.embedding_dim is not None  # embedded after commit (Celery, eager in tests)


def test_edge_approval_resolves_endpoints_by_name_including_entities_approved_in_the_same_call(
    moderator,
):
    EntityFactory(name="Billing API", entity_type="service")
    pg = EntityCandidateFactory(name="Postgres")
    edge = EdgeCandidateFactory(source_name="billing api", target_name="Postgres")
    outcomes = candidates_decide(
        items=[
            DecisionItem(edge.pk, "edge", "approve"),
            DecisionItem(pg.pk, "entity", "approve"),
        ],
        reviewer=moderator,
    )
    assert [o.ok for o in outcomes] == [True, True]
    created = Edge.objects.select_related("source", "target").get()
    assert (created.source.name, created.target.name, created.rel_type) == (
        "Billing API",
        "Postgres",
        "depends_on",
    )
    edge.refresh_from_db()
    assert edge.promoted_id == created.pk


def test_edge_approval_fails_clearly_naming_the_missing_endpoint(moderator):
    EntityFactory(name="Billing API")
    edge = EdgeCandidateFactory(source_name="Billing API", target_name="Ghost DB")
    with pytest.raises(DecisionError, match="target entity 'Ghost DB' does not exist"):
        candidate_decide(kind="edge", candidate_id=edge.pk, decision="approve", reviewer=moderator)
    edge.refresh_from_db()
    assert edge.status == "pending"
    assert Edge.objects.count() == 0


def test_edge_endpoints_resolve_through_aliases(moderator):
    canonical = EntityFactory(name="PostgreSQL")
    EntityFactory(name="Billing API")
    alias = EntityCandidateFactory(name="Postgres")
    candidate_decide(
        kind="entity", candidate_id=alias.pk, decision="alias", reviewer=moderator,
        canonical_id=canonical.pk,
    )  # fmt: skip
    canonical.refresh_from_db()
    assert canonical.aliases == ["Postgres"]
    alias.refresh_from_db()
    assert (alias.status, alias.promoted_id) == ("aliased", canonical.pk)
    edge = EdgeCandidateFactory(source_name="Billing API", target_name="postgres")
    candidate_decide(kind="edge", candidate_id=edge.pk, decision="approve", reviewer=moderator)
    assert Edge.objects.get().target_id == canonical.pk


def test_alias_without_canonical_fails(moderator):
    cand = EntityCandidateFactory()
    with pytest.raises(DecisionError, match="canonical_id"):
        candidate_decide(kind="entity", candidate_id=cand.pk, decision="alias", reviewer=moderator)


def test_dry_run_decisions_write_nothing(moderator):
    cand = EntityCandidateFactory(name="Redis")
    (outcome,) = candidates_decide(
        items=[DecisionItem(cand.pk, "entity", "approve")], reviewer=moderator, dry_run=True
    )
    assert outcome.ok and outcome.detail.startswith("dry run: created entity")
    cand.refresh_from_db()
    assert cand.status == "pending"
    assert Entity.objects.count() == 0


def test_text_extract_dry_run_writes_nothing_and_real_run_stages():
    text = "The export worker depends on RabbitMQ."
    result, staged = text_extract(text=text, dry_run=True)
    assert result.provider == "heuristic" and staged.entities == 0
    assert EntityCandidate.objects.count() == 0
    _, staged = text_extract(text=text, dry_run=False)
    assert (staged.entities, staged.edges) == (2, 1)


def test_thought_extract_stages_with_the_thought_and_its_origin():
    thought = ThoughtFactory(origin="inner_voice", content="cart-service -> session-store")
    _result, staged = thought_extract(thought_id=thought.id)
    assert staged.edges == 1
    assert set(EntityCandidate.objects.values_list("origin", flat=True)) == {"inner_voice"}
    assert EdgeCandidate.objects.get().staged_by_thought_id == thought.id


def test_a_failed_item_reports_the_status_its_candidate_still_has(mod_api):
    cand = EntityCandidateFactory(name="Redis", entity_type="technology")
    items = [
        {"id": cand.pk, "kind": "entity", "decision": "approve"},
        {"id": cand.pk, "kind": "entity", "decision": "reject"},  # already approved
        {"id": 987_654, "kind": "entity", "decision": "approve"},  # no such candidate
        {"id": cand.pk + 1, "kind": "entity", "decision": "alias", "canonical_id": 987_654},
    ]
    EntityCandidateFactory(name="Other", entity_type="technology")  # id cand.pk + 1, pending
    response = mod_api.post("/api/v1/kg/candidates/decide", {"items": items}, format="json")
    assert response.status_code == 200, response.content
    results = response.json()["results"]
    assert [(r["ok"], r["status"]) for r in results] == [
        (True, "approved"),
        (False, "approved"),
        (False, "missing"),
        (False, "pending"),
    ]
