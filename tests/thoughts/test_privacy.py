"""Two users over HTTP: a user reads only their own thoughts, and another user's private thought
never shows, through list, detail, chain or search, nor through the observations drawn from it."""

from __future__ import annotations

import pytest

from tests.thoughts.factories_read import EntityFactory, ObservationFactory, ThoughtFactory, near

pytestmark = pytest.mark.django_db
Q = "the salary negotiation I keep postponing"


@pytest.fixture
def bobs(other_user):
    """Bob's thoughts, very close to Q, one private; an observation drawn from each."""
    private = ThoughtFactory(
        owner=other_user, is_private=True, session_id="shared", chain_id="shared", **near(Q, 0.95)
    )
    public = ThoughtFactory(
        owner=other_user, session_id="shared", chain_id="shared", **near(Q, 0.9)
    )
    ObservationFactory(name="bob private note", source_thought=private, **near(Q, 0.95))
    ObservationFactory(name="bob public note", source_thought=public, **near(Q, 0.9))
    return {"private": private, "public": public}


@pytest.fixture
def alices(user):
    mine = ThoughtFactory(owner=user, session_id="shared", chain_id="shared", **near(Q, 0.6))
    secret = ThoughtFactory(owner=user, is_private=True, chain_id="shared", **near(Q, 0.5))
    ObservationFactory(name="alice private note", source_thought=secret, **near(Q, 0.5))
    return {"mine": mine, "secret": secret}


def test_list_shows_only_the_viewers_thoughts_private_ones_included(api, other_api, bobs, alices):
    alice_sees = {row["id"] for row in api.get("/api/v1/thoughts/").json()["results"]}
    assert alice_sees == {str(alices["mine"].pk), str(alices["secret"].pk)}
    bob_sees = {row["id"] for row in other_api.get("/api/v1/thoughts/").json()["results"]}
    assert bob_sees == {str(bobs["private"].pk), str(bobs["public"].pk)}
    # A shared session or chain name does not open anybody else's thoughts.
    by_session = api.get("/api/v1/thoughts/", {"session_id": "shared"}).json()["results"]
    assert [row["id"] for row in by_session] == [str(alices["mine"].pk)]


@pytest.mark.parametrize("which", ["private", "public"])
@pytest.mark.parametrize("suffix", ["", "chain/"])
def test_another_users_thought_is_404_like_a_missing_one(api, bobs, which, suffix):
    resp = api.get(f"/api/v1/thoughts/{bobs[which].pk}/{suffix}")
    assert resp.status_code == 404
    assert resp.json() == {"error_code": "not_found", "detail": "No such thought.", "fields": {}}


def test_chain_never_includes_another_users_thoughts_linked_either_way(api, user, other_user):
    mine = ThoughtFactory(owner=user)
    # Bob links his private thought after alice's (he only needs its id) ...
    ThoughtFactory(owner=other_user, is_private=True, previous_thought=mine)
    # ... and alice's next thought follows one of bob's.
    theirs = ThoughtFactory(owner=other_user, is_private=True)
    follows_bob = ThoughtFactory(owner=user, previous_thought=theirs)
    tree = api.get(f"/api/v1/thoughts/{mine.pk}/chain/").json()
    assert tree["root"]["id"] == str(mine.pk)
    assert tree["root"]["successors"] == []
    other = api.get(f"/api/v1/thoughts/{follows_bob.pk}/chain/").json()
    assert other["ancestors"] == 0
    assert other["root"]["id"] == str(follows_bob.pk)


def test_search_never_returns_another_users_thoughts(api, bobs, alices):
    body = api.post(
        "/api/v1/search", {"query": Q, "target": "thoughts", "top_k_thoughts": 50}, format="json"
    ).json()
    found = [row["id"] for row in body["thoughts"]["results"]]
    assert found == [str(alices["mine"].pk), str(alices["secret"].pk)]
    for session_filter in ({"session_id": "shared"}, {"chain_id": "shared"}):
        body = api.post(
            "/api/v1/search", {"query": Q, "target": "thoughts", **session_filter}, format="json"
        ).json()
        assert str(bobs["private"].pk) not in {row["id"] for row in body["thoughts"]["results"]}
        assert str(bobs["public"].pk) not in {row["id"] for row in body["thoughts"]["results"]}


def test_observations_from_another_users_private_thought_stay_hidden(api, other_api, bobs, alices):
    def notes(client) -> list[str]:
        body = client.post(
            "/api/v1/search", {"query": Q, "target": "observation"}, format="json"
        ).json()
        return [item["name"] for item in body["memories"]["items"]]

    assert notes(api) == ["bob public note", "alice private note"]
    assert notes(other_api) == ["bob private note", "bob public note"]


def test_entities_from_another_users_private_thought_stay_hidden(api, other_api, bobs):
    EntityFactory(name="bob private entity", source_thought=bobs["private"], **near(Q, 0.9))
    EntityFactory(name="bob public entity", source_thought=bobs["public"], **near(Q, 0.8))
    EntityFactory(name="unsourced entity", **near(Q, 0.7))

    def entities(client) -> list[str]:
        body = client.post("/api/v1/search", {"query": Q, "target": "entity"}, format="json")
        return [item["name"] for item in body.json()["memories"]["items"]]

    assert entities(api) == ["bob public entity", "unsourced entity"]
    assert entities(other_api) == ["bob private entity", "bob public entity", "unsourced entity"]


def test_chain_filtered_memories_come_only_from_the_viewers_chain(api, bobs, alices):
    body = api.post(
        "/api/v1/search", {"query": Q, "target": "observation", "chain_id": "shared"}, format="json"
    ).json()
    assert [item["name"] for item in body["memories"]["items"]] == ["alice private note"]


def test_detail_does_not_reveal_a_private_observation_injected_elsewhere(api, user, bobs):
    hidden_obs = ObservationFactory(name="bob secret", source_thought=bobs["private"])
    hidden_entity = EntityFactory(name="Bob's secret", source_thought=bobs["private"])
    thought = ThoughtFactory(
        owner=user,
        injected_memories=[
            {"id": hidden_obs.pk, "kind": "observation", "ref": f"kgo:{hidden_obs.pk}"},
            {"id": hidden_entity.pk, "kind": "entity", "name": "Bob's secret"},
        ],
    )
    memories = api.get(f"/api/v1/thoughts/{thought.pk}/").json()["injected_memories"]
    assert [m["available"] for m in memories] == [False, False]
    assert [m["name"] for m in memories] == [None, None]
    assert [m["description"] for m in memories] == [None, None]


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/api/v1/thoughts/"),
        ("get", "/api/v1/thoughts/00000000-0000-0000-0000-000000000000/"),
        ("get", "/api/v1/thoughts/00000000-0000-0000-0000-000000000000/chain/"),
        ("post", "/api/v1/search"),
    ],
)
def test_anonymous_requests_are_401(anon_api, method, path):
    resp = getattr(anon_api, method)(path, {"query": Q} if method == "post" else None)
    assert resp.status_code == 401
    assert resp.json()["error_code"] == "not_authenticated"
