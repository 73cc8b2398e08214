"""What the graph drew from a private thought goes with that thought: deleted by itself (the
admin) or with its owner, its memories and candidates are deleted, so none of them turns into a
shared memory (a memory with no source thought reads as shared). What came from a shared thought
stays, without the link."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from kg.models import Edge, EdgeCandidate, Entity, EntityCandidate, Observation
from tests.kg.factories import (
    EdgeCandidateFactory,
    EdgeFactory,
    EntityCandidateFactory,
    EntityFactory,
    ThoughtFactory,
)

pytestmark = pytest.mark.django_db


def drawn_from(thought: Any, tag: str) -> dict[str, Any]:
    """An entity, an observation on it, an edge from it to a shared entity, and a candidate of
    each kind, all drawn from ``thought``."""
    entity = EntityFactory(name=f"Quillport {tag}", source_thought=thought)
    return {
        "entity": entity,
        "observation": Observation.objects.create(
            name=f"Quillport {tag} plan", description="moves in May", source_thought=thought
        ),
        "edge": EdgeFactory(source=entity, target=EntityFactory(), source_thought=thought),
        "entity_candidate": EntityCandidateFactory(name=f"Zed {tag}", staged_by_thought=thought),
        "edge_candidate": EdgeCandidateFactory(staged_by_thought=thought),
    }


MODELS = {
    "entity": Entity,
    "observation": Observation,
    "edge": Edge,
    "entity_candidate": EntityCandidate,
    "edge_candidate": EdgeCandidate,
}


def exists(rows: dict[str, Any]) -> dict[str, bool]:
    return {kind: MODELS[kind].objects.filter(pk=row.pk).exists() for kind, row in rows.items()}


def test_deleting_a_private_thought_deletes_what_was_drawn_from_it(user, other_api):
    private = ThoughtFactory(owner=user, is_private=True, content="my private plans")
    shared = ThoughtFactory(owner=user, content="the public roadmap")
    hidden, kept = drawn_from(private, "private"), drawn_from(shared, "shared")
    entity_url = f"/api/v1/kg/entities/{hidden['entity'].pk}/"
    assert other_api.get(entity_url).status_code == 404

    private.delete()

    assert exists(hidden) == dict.fromkeys(MODELS, False)
    assert other_api.get(entity_url).status_code == 404  # not a shared memory now
    assert exists(kept) == dict.fromkeys(MODELS, True)
    shared.delete()
    assert exists(kept) == dict.fromkeys(MODELS, True)  # the shared thought's stay...
    kept["entity"].refresh_from_db()
    assert kept["entity"].source_thought_id is None  # ...without the link
    assert other_api.get(f"/api/v1/kg/entities/{kept['entity'].pk}/").status_code == 200


def test_deleting_a_user_deletes_what_their_private_thoughts_drew(other_api):
    owner = User.objects.create_user("carol", password="pw-carol")
    private = ThoughtFactory(owner=owner, is_private=True, content="carol's private plans")
    shared = ThoughtFactory(owner=owner, content="carol's public notes")
    hidden, kept = drawn_from(private, "private"), drawn_from(shared, "shared")

    owner.delete()

    assert exists(hidden) == dict.fromkeys(MODELS, False)
    assert exists(kept) == dict.fromkeys(MODELS, True)
    names = [e["name"] for e in other_api.get("/api/v1/kg/entities/").json()["results"]]
    assert "Quillport private" not in names and "Quillport shared" in names


def test_an_entity_from_a_private_thought_takes_shared_edges_on_it_along(user):
    # An edge from a shared thought that points at the private entity was hidden with it (an
    # edge shows only between visible entities): it goes too, by the entity's own cascade.
    private = ThoughtFactory(owner=user, is_private=True)
    entity = EntityFactory(name="Quillport", source_thought=private)
    edge = EdgeFactory(source=EntityFactory(), target=entity, source_thought=ThoughtFactory())
    private.delete()
    assert not Edge.objects.filter(pk=edge.pk).exists()
