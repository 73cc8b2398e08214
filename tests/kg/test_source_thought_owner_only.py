"""A shared memory names the thought it was drawn from to that thought's owner only.

alice's thought is not private, so what was drawn from it is in everyone's graph; but only alice
can open the thought. bob (and the moderator) see the memory with ``source_thought_id`` null, as
for a memory drawn from no thought, in every answer that shows memories. The link itself stays.
"""

from __future__ import annotations

import pytest

from kg.models import Edge, Entity
from tests.thoughts.factories_read import (
    EntityFactory,
    ObservationFactory,
    ThoughtFactory,
    near,
)

pytestmark = pytest.mark.django_db
Q = "why does the export worker stall at night"


@pytest.fixture
def drawn(user):
    thought = ThoughtFactory(owner=user, content="The export worker stalls at night.")
    entity = EntityFactory(name="Export worker", source_thought=thought, **near(Q, 0.9))
    other = EntityFactory(name="Night batch", source_thought=None)
    return {
        "thought": str(thought.pk),
        "entity": entity,
        "observation": ObservationFactory(
            name="stalls at night", entity=entity, source_thought=thought, **near(Q, 0.8)
        ),
        "edge": Edge.objects.create(
            source=entity, target=other, rel_type="runs", source_thought=thought
        ),
    }


def _sources(client, drawn) -> dict[str, object]:
    entity, obs, edge = drawn["entity"].pk, drawn["observation"].pk, drawn["edge"].pk
    get = lambda url: client.get(url).json()  # noqa: E731
    neighbors = get(f"/api/v1/kg/entities/{entity}/neighbors/")
    search = client.post("/api/v1/search", {"query": Q}, format="json").json()
    return {
        "entity": get(f"/api/v1/kg/entities/{entity}/")["source_thought_id"],
        "entity list": get("/api/v1/kg/entities/?q=Export")["results"][0]["source_thought_id"],
        "observation": get(f"/api/v1/kg/observations/{obs}/")["source_thought_id"],
        "observation list": get("/api/v1/kg/observations/")["results"][0]["source_thought_id"],
        "edge": get(f"/api/v1/kg/edges/{edge}/")["source_thought_id"],
        "edge list": get("/api/v1/kg/edges/")["results"][0]["source_thought_id"],
        "neighbors entity": neighbors["entity"]["source_thought_id"],
        "neighbors edge": neighbors["edges"][0]["source_thought_id"],
        "search": {i["name"]: i["source_thought_id"] for i in search["memories"]["items"]},
    }


def test_the_owner_sees_the_source_thought_everywhere(api, drawn):
    thought = drawn["thought"]
    assert _sources(api, drawn) == {
        "entity": thought,
        "entity list": thought,
        "observation": thought,
        "observation list": thought,
        "edge": thought,
        "edge list": thought,
        "neighbors entity": thought,
        "neighbors edge": thought,
        "search": {"Export worker": thought, "stalls at night": thought, "Night batch": None},
    }


def test_another_user_sees_the_memory_but_not_its_source_thought(other_api, drawn):
    seen = _sources(other_api, drawn)
    assert seen["search"] == {"Export worker": None, "stalls at night": None, "Night batch": None}
    assert {k: v for k, v in seen.items() if k != "search"} == dict.fromkeys(
        [k for k in seen if k != "search"]
    )


def test_a_moderators_write_answers_without_it_and_keeps_the_link(mod_api, drawn):
    entity = drawn["entity"]
    r = mod_api.patch(f"/api/v1/kg/entities/{entity.pk}/", {"description": "x"}, format="json")
    assert r.status_code == 200 and r.json()["source_thought_id"] is None
    assert str(Entity.objects.get(pk=entity.pk).source_thought_id) == drawn["thought"]
    # An upsert onto it (its natural key) answers the same way.
    again = mod_api.post(
        "/api/v1/kg/entities/",
        {"name": "Export worker", "entity_type": "technology"},
        format="json",
    )
    assert again.status_code == 200 and again.json()["source_thought_id"] is None
