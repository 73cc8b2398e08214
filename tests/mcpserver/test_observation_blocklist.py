"""Through the drop-in tools, as a non-moderator writes and a moderator decides: an
observation rejected with ``memories_moderate`` is not staged again by ``add_observations``."""

from __future__ import annotations

import pytest

import mcpserver.tools  # noqa: F401  (registers the tools)
from kg.models import Blocklist, ObservationCandidate
from mcpserver.registry import tool_call
from tests.kg.factories import EntityFactory

pytestmark = pytest.mark.django_db


def _observe(user, *texts: str) -> dict:
    observations = [{"entityName": "Ledger", "contents": list(texts)}]
    (result,) = tool_call(
        user=user, name="add_observations", arguments={"observations": observations}
    )["results"]
    return result


def test_a_rejected_observation_is_not_staged_again_by_add_observations(user, moderator):
    EntityFactory(name="Ledger")
    assert _observe(user, "noise")["status"] == "pending"
    cand = ObservationCandidate.objects.get()
    decided = tool_call(
        user=moderator,
        name="memories_moderate",
        arguments={
            "action": "decide",
            "items": [{"id": cand.pk, "kind": "observation", "decision": "reject",
                       "feedback": "not a fact"}],
        },
    )  # fmt: skip
    (outcome,) = decided["results"]
    assert (outcome["ok"], outcome["status"]) == (True, "rejected")
    entry = Blocklist.objects.get(kind="observation")
    assert entry.reason == "not a fact"  # feedback stands for the note

    _observe(user, "noise", "nightly")
    pending = ObservationCandidate.objects.filter(status="pending")
    assert list(pending.values_list("description", flat=True)) == ["nightly"]
