"""Continuity links through POST /api/v1/think: record, string, self-link, duplicate, 400."""

from __future__ import annotations

import uuid

import pytest

from tests.thoughts.factories import ThoughtFactory
from thoughts.models import Thought

pytestmark = pytest.mark.django_db

URL = "/api/v1/think"


def think(api, **payload):
    return api.post(
        URL, {"content": "Next step in the chain", "injection_scale": 0, **payload}, format="json"
    )


def test_link_to_an_existing_thought_is_a_record(api, user):
    earlier = ThoughtFactory(owner=user)
    r = think(api, previous_thought_id=str(earlier.id))
    assert r.status_code == 201
    body = r.json()
    assert body["telemetry"]["links_telemetry"] == {"previous_thought_id": "record"}
    assert body["links"]["previous_thought_id"] == f"thoughts:{earlier.id}"
    stored = Thought.objects.exclude(id=earlier.id).get()
    assert stored.previous_thought == earlier


def test_thoughts_prefix_is_accepted(api, user):
    earlier = ThoughtFactory(owner=user)
    r = think(api, revises_thought=f"thoughts:{earlier.id}")
    assert r.json()["telemetry"]["links_telemetry"] == {"revises_thought": "record"}
    assert Thought.objects.exclude(id=earlier.id).get().revises_thought_id == earlier.id


def test_link_to_a_missing_thought_is_kept_as_string_and_resolves_later(api):
    future = uuid.uuid4()
    r = think(api, branch_from=str(future))
    assert r.status_code == 201
    assert r.json()["telemetry"]["links_telemetry"] == {"branch_from": "string"}
    assert r.json()["links"]["branch_from"] == f"thoughts:{future}"
    linking = Thought.objects.get()
    assert linking.branch_from_id == future

    # The thought that id names is written later: the stored link now resolves to it.
    r2 = api.post(URL, {"content": "The branch point", "thought_id": str(future)}, format="json")
    assert r2.status_code == 201, r2.json()
    assert r2.json()["delegated_result"]["thought_id"] == f"thoughts:{future}"
    linking.refresh_from_db()
    assert linking.branch_from.content == "The branch point"


def test_link_to_another_users_thought_is_not_confirmed(api, other_user):
    theirs = ThoughtFactory(owner=other_user)
    r = think(api, previous_thought_id=str(theirs.id))
    assert r.json()["telemetry"]["links_telemetry"] == {"previous_thought_id": "string"}


def test_self_link_is_dropped(api):
    own = uuid.uuid4()
    r = think(api, thought_id=f"thoughts:{own}", previous_thought_id=str(own))
    assert r.status_code == 201, r.json()
    body = r.json()
    assert body["telemetry"]["links_telemetry"] == {"previous_thought_id": "dropped_self_link"}
    assert body["links"]["previous_thought_id"] is None
    assert Thought.objects.get(id=own).previous_thought_id is None


def test_repeated_id_across_link_fields_is_dropped_as_duplicate(api, user):
    earlier = ThoughtFactory(owner=user)
    r = think(
        api,
        previous_thought_id=str(earlier.id),
        revises_thought=f"thoughts:{earlier.id}",
        branch_from=str(earlier.id),
    )
    body = r.json()
    assert body["telemetry"]["links_telemetry"] == {
        "previous_thought_id": "record",
        "revises_thought": "dropped_duplicate",
        "branch_from": "dropped_duplicate",
    }
    assert body["links"]["revises_thought"] is None
    stored = Thought.objects.exclude(id=earlier.id).get()
    assert (stored.previous_thought_id, stored.revises_thought_id, stored.branch_from_id) == (
        earlier.id,
        None,
        None,
    )


@pytest.mark.parametrize(
    "bad", ["abc", "thoughts:not-a-uuid", "thought:" + str(uuid.UUID(int=1)), "12345"]
)
@pytest.mark.parametrize("field", ["previous_thought_id", "revises_thought", "branch_from"])
def test_malformed_link_is_a_400_and_stores_nothing(api, field, bad):
    r = think(api, **{field: bad})
    assert r.status_code == 400
    assert r.json()["error_code"] == "invalid"
    assert field in r.json()["fields"]
    assert Thought.objects.count() == 0


def test_session_chain_and_confidence_are_stored_and_echoed(api):
    r = think(api, session_id="20251230-Session1-CC", chain_id="chain-7", confidence=0.8)
    body = r.json()
    assert body["links"] == {
        "session_id": "20251230-Session1-CC",
        "chain_id": "chain-7",
        "previous_thought_id": None,
        "revises_thought": None,
        "branch_from": None,
        "confidence": 0.8,
    }
    assert body["telemetry"]["links_telemetry"] == {}
    stored = Thought.objects.get()
    assert (stored.session_id, stored.chain_id, stored.confidence) == (
        "20251230-Session1-CC",
        "chain-7",
        0.8,
    )


def test_writing_an_existing_thought_id_is_a_409_and_changes_nothing(api, user):
    existing = ThoughtFactory(owner=user, content="original")
    r = think(api, thought_id=str(existing.id))
    assert r.status_code == 409
    assert r.json()["error_code"] == "conflict"
    assert r.json()["fields"] == {"thought_id": ["A thought with this id exists already."]}
    existing.refresh_from_db()
    assert existing.content == "original"
    assert Thought.objects.count() == 1


def test_another_users_thought_id_is_not_available_and_names_nothing(api, other_user):
    theirs = ThoughtFactory(owner=other_user, content="theirs", is_private=True)
    r = think(api, thought_id=str(theirs.id))
    assert r.status_code == 409
    assert r.json()["fields"] == {"thought_id": ["This id is not available: choose another."]}
    assert "theirs" not in r.content.decode()
    assert Thought.objects.count() == 1


def test_an_id_another_user_links_to_cannot_be_claimed_but_its_linker_can(
    api, other_api, other_user
):
    """A forward link ("string") waits for its writer's thought: another user taking the id
    would leave it pointing at a stranger's thought."""
    future = uuid.uuid4()
    assert think(other_api, previous_thought_id=str(future)).status_code == 201
    r = think(api, thought_id=str(future))
    assert r.status_code == 409
    assert r.json()["fields"] == {"thought_id": ["This id is not available: choose another."]}
    assert not Thought.objects.filter(id=future).exists()
    mine = think(other_api, thought_id=str(future), content="The thought the link meant")
    assert mine.status_code == 201, mine.json()
    assert Thought.objects.get(id=future).owner == other_user
