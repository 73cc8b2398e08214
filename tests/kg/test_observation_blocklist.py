"""A rejected observation goes on the blocklist, as a rejected entity or relation does: its
text on its entity is never staged again, until a moderator takes it off the list."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps

from kg.models import Blocklist, CandidateStatus, ObservationCandidate
from kg.services import StagedObservation, candidate_decide, stage_observations
from tests.kg.factories import EntityFactory

pytestmark = pytest.mark.django_db


def _stage(*observations: StagedObservation) -> int:
    return stage_observations(observations=list(observations), origin="mcp:1")


def _reject(moderator, note: str = "") -> ObservationCandidate:
    cand = ObservationCandidate.objects.get(status=CandidateStatus.PENDING)
    outcome = candidate_decide(
        kind="observation",
        candidate_id=cand.pk,
        decision="reject",
        reviewer=moderator,
        note=note,
    )
    assert outcome.detail == "rejected; the observation is blocklisted"
    return cand


def test_rejecting_an_observation_blocklists_its_text_on_its_entity(moderator):
    ledger = EntityFactory(name="Ledger")
    _stage(StagedObservation("Ledger: Noise", "Noise", "Ledger", ledger.pk))
    _reject(moderator, note="not a fact")
    (entry,) = Blocklist.objects.all()
    assert (entry.kind, entry.item) == (Blocklist.Kind.OBSERVATION, "ledger|ledger: noise")
    assert (entry.reason, entry.created_by) == ("not a fact", moderator)


def test_a_blocklisted_observation_is_not_staged_again_but_others_are(moderator):
    ledger = EntityFactory(name="Ledger")
    _stage(StagedObservation("Ledger: noise", "noise", "Ledger", ledger.pk))
    _reject(moderator)
    # The same text on the same entity, in other case and spacing: not staged.
    assert _stage(StagedObservation(" LEDGER:  noise ", "noise", "ledger")) == 0
    assert not ObservationCandidate.objects.filter(status=CandidateStatus.PENDING).exists()
    # Another text on that entity, and the same text on another entity, are.
    assert _stage(StagedObservation("Ledger: nightly", "nightly", "Ledger", ledger.pk)) == 1
    assert _stage(StagedObservation("Ledger: noise", "noise", "Ferry")) == 1
    staged = ObservationCandidate.objects.filter(status=CandidateStatus.PENDING)
    assert sorted(staged.values_list("name", "entity_name")) == [
        ("Ledger: nightly", "Ledger"),
        ("Ledger: noise", "Ferry"),
    ]


def test_taking_it_off_the_blocklist_lets_it_be_staged_again(moderator):
    _stage(StagedObservation("Ledger: noise", "noise", "Ledger"))
    _reject(moderator)
    assert _stage(StagedObservation("Ledger: noise", "noise", "Ledger")) == 0
    Blocklist.objects.filter(kind=Blocklist.Kind.OBSERVATION).delete()
    assert _stage(StagedObservation("Ledger: noise", "noise", "Ledger")) == 1


def test_the_migration_blocklists_observations_rejected_before_it(moderator):
    # Rows as they stood before: rejected candidates, no blocklist entries.
    ObservationCandidate.objects.create(
        name="Ledger:  Noise", entity_name="LEDGER", status=CandidateStatus.REJECTED,
        review_note="noise", reviewed_by=moderator,
    )  # fmt: skip
    ObservationCandidate.objects.create(name="Ledger: noise", entity_name="Ledger",
                                        status=CandidateStatus.REJECTED)  # fmt: skip
    ObservationCandidate.objects.create(name="Ledger: kept", entity_name="Ledger")
    migration = importlib.import_module("kg.migrations.0013_blocklist_observations")
    migration.rejected_observations_blocklisted(apps, None)
    (entry,) = Blocklist.objects.all()  # the two rejections are one identity
    assert (entry.kind, entry.item) == ("observation", "ledger|ledger: noise")
    assert (entry.reason, entry.created_by) == ("noise", moderator)
    assert _stage(StagedObservation("Ledger: noise", "noise", "Ledger")) == 0
