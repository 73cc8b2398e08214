"""``kg.selectors.memories_nearest``: the one read of "the nearest memories this user may see".

Its privacy rule is tested here once, thoroughly; each caller (think injection and verification,
``legacymind_search``, the KG search, the inner voice) has one test below proving that it reads
through it, with the viewer it serves."""

from __future__ import annotations

import importlib
import sys
from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser, User
from django.db import connection
from django.test.utils import CaptureQueriesContext

from kg.selectors import memories_nearest, nearest
from tests.innervoice.conftest import voice  # noqa: F401  (fixture)
from tests.kg.conftest import grok  # noqa: F401  (fixture, used by voice)
from tests.support.texts import of_its_own
from tests.thoughts.conftest import embedded, text_vector, with_cosine
from tests.thoughts.factories import EntityFactory, ObservationFactory, ThoughtFactory
from thoughts.models import Thought

pytestmark = pytest.mark.django_db

QUERY = "Notes on the greenhouse irrigation timer"
MODEL = "feature-hash-384"
SOURCES = ("none", "mine_private", "mine_shared", "theirs_private", "theirs_shared")


@pytest.fixture(autouse=True)
def _query_of_its_own(request: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys.modules[__name__], "QUERY", of_its_own(QUERY, request.node.name))


@pytest.fixture(autouse=True)
def _no_remembered_empty_kinds() -> None:
    nearest._NONE_SEARCHABLE.clear()


@pytest.fixture
def graph(user: User, other_user: User) -> dict[str, Any]:
    """An entity and an observation drawn from each kind of source, the other user's private
    ones nearest of all, so that a rule applied after the LIMIT would be caught short."""
    thoughts: dict[str, Thought | None] = {
        "none": None,
        "mine_private": ThoughtFactory(owner=user, is_private=True),
        "mine_shared": ThoughtFactory(owner=user, is_private=False),
        "theirs_private": ThoughtFactory(owner=other_user, is_private=True),
        "theirs_shared": ThoughtFactory(owner=other_user, is_private=False),
    }
    cosines = {
        "theirs_private": 0.95,
        "none": 0.9,
        "mine_private": 0.85,
        "mine_shared": 0.8,
        "theirs_shared": 0.75,
    }
    rows: dict[tuple[str, str], Any] = {}
    for seed, source in enumerate(SOURCES):
        for kind, factory in (("entity", EntityFactory), ("observation", ObservationFactory)):
            vector = with_cosine(text_vector(QUERY), cosines[source], seed * 2 + len(kind))
            rows[kind, source] = factory(
                name=f"{kind} from {source}", source_thought=thoughts[source], **embedded(vector)
            )
    return {"rows": rows, "thoughts": thoughts}


def names(viewer: Any, **kwargs: Any) -> list[str]:
    kwargs.setdefault("k", 10)
    found = memories_nearest(viewer, text_vector(QUERY).tolist(), model=MODEL, **kwargs)
    return [hit.name for hit in found.hits]


def expected(*sources: str, kinds: tuple[str, ...] = ("entity", "observation")) -> set[str]:
    return {f"{kind} from {source}" for kind in kinds for source in sources}


def test_a_user_sees_shared_memories_and_their_own_private_ones(graph, user):
    assert set(names(user)) == expected("none", "mine_private", "mine_shared", "theirs_shared")


def test_the_other_user_sees_theirs_and_never_mine(graph, other_user):
    seen = set(names(other_user))
    assert seen == expected("none", "theirs_private", "mine_shared", "theirs_shared")


def test_an_anonymous_viewer_sees_shared_memories_only(graph):
    assert set(names(AnonymousUser())) == expected("none", "mine_shared", "theirs_shared")


def test_without_own_private_even_the_owner_does_not_see_them(graph, user):
    seen = set(names(user, own_private=False))
    assert seen == expected("none", "mine_shared", "theirs_shared")


def test_a_hidden_memory_nearest_the_query_takes_no_place_in_the_k(graph, user):
    """The rule is in the SQL: with k=1 the nearest visible row comes back, not nothing."""
    found = memories_nearest(user, text_vector(QUERY).tolist(), model=MODEL, k=1)
    assert sorted(hit.name for hit in found.hits) == sorted(expected("none"))


def test_memories_hidden_from_the_viewer_do_not_make_a_search_look_crowded(graph, user):
    """A search short of k because the rule hid rows is not an index full of dead entries: it
    is not searched again."""
    with CaptureQueriesContext(connection) as captured:
        names(AnonymousUser())
        names(user, own_private=False)
    assert not any("iterative_scan" in q["sql"] for q in captured.captured_queries)


def test_one_compiled_search_serves_each_viewer_with_their_own_rule(graph, user, other_user):
    for _ in range(2):  # the second round reads the compiled query from the cache
        assert "entity from theirs_private" not in names(user)
        assert "entity from theirs_private" in names(other_user)
        assert "entity from mine_private" not in names(other_user)
        assert "entity from mine_private" in names(user)


def test_hits_are_most_similar_first_with_the_bar_and_the_kinds_applied(graph, user):
    found = memories_nearest(
        user, text_vector(QUERY).tolist(), model=MODEL, k=10, kinds=("entity",), min_similarity=0.82
    )
    assert [hit.name for hit in found.hits] == ["entity from none", "entity from mine_private"]
    assert [hit.similarity for hit in found.hits] == sorted(
        (hit.similarity for hit in found.hits), reverse=True
    )


def test_the_fallback_bar_applies_only_when_nothing_passes_the_first(graph, user):
    vector = text_vector(QUERY).tolist()
    nothing = memories_nearest(user, vector, model=MODEL, k=10, min_similarity=0.99)
    assert nothing.hits == []
    fallback = memories_nearest(user, vector, model=MODEL, k=10, min_similarity=0.99, fallback=0.88)
    assert {hit.name for hit in fallback.hits} == expected("none")


def test_a_hit_names_its_source_thought_to_that_thoughts_owner_only(graph, user, other_user):
    hits = memories_nearest(user, text_vector(QUERY).tolist(), model=MODEL, k=10).hits
    by_name = {hit.name: hit for hit in hits}
    mine = by_name["entity from mine_shared"]
    theirs = by_name["entity from theirs_shared"]
    assert mine.source_for(user) == graph["thoughts"]["mine_shared"].id
    assert theirs.source_for(user) is None
    assert theirs.source_for(other_user) == graph["thoughts"]["theirs_shared"].id
    assert by_name["entity from mine_private"].private and not mine.private
    assert by_name["entity from none"].source_for(user) is None


def test_from_thoughts_keeps_memories_drawn_from_those_thoughts_under_the_same_rule(
    graph, user, other_user
):
    everyone = Thought.objects.all()
    seen = set(names(user, from_thoughts=everyone))
    assert seen == expected("mine_private", "mine_shared", "theirs_shared")
    mine = Thought.objects.filter(owner=user)
    assert set(names(user, from_thoughts=mine)) == expected("mine_private", "mine_shared")


def test_rows_of_another_model_or_without_a_vector_are_not_returned_but_probed(graph, user):
    EntityFactory(name="entity unembedded")
    vector = with_cosine(text_vector(QUERY), 0.99, 999)
    EntityFactory(name="entity other model", **{**embedded(vector), "embedding_model": "x-384"})
    found = memories_nearest(
        user, text_vector(QUERY).tolist(), model=MODEL, k=10, probe_unembedded=5
    )
    assert "entity unembedded" not in {hit.name for hit in found.hits}
    assert "entity other model" not in {hit.name for hit in found.hits}
    assert len(found.unembedded["entity"]) == 1


# --- each caller reads through the selector, as the viewer it serves ---------------------------


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Records each caller's call of ``memories_nearest`` (the real one answers)."""
    seen: list[dict[str, Any]] = []

    def spy(viewer: Any, vector: Any, **kwargs: Any) -> Any:
        seen.append({"viewer": viewer, **kwargs})
        return memories_nearest(viewer, vector, **kwargs)

    for module in (
        "thoughts.think.injection",
        "thoughts.think.verification",
        "thoughts.selectors.search",
        "innervoice.retrieval",
        "kg.selectors.nearest",
    ):
        monkeypatch.setattr(importlib.import_module(module), "memories_nearest", spy)
    return seen


def test_think_injection_reads_through_the_selector(graph, api, user, calls):
    r = api.post("/api/v1/think", {"content": QUERY, "injection_scale": 3}, format="json")
    assert r.status_code == 201, r.json()
    assert [c["viewer"] for c in calls] and all(c["viewer"] == user for c in calls)
    injected = {item["name"] for item in r.json()["injected"]}
    assert "entity from theirs_private" not in injected and "entity from none" in injected


def test_verification_reads_through_the_selector(graph, api, user, calls):
    body = {
        "content": "How should I water it?",
        "hint": "question",
        "injection_scale": 0,
        "hypothesis": QUERY,
        "needs_verification": True,
    }
    r = api.post("/api/v1/think", body, format="json")
    assert r.status_code == 201, r.json()
    assert [c["viewer"] for c in calls] == [user]
    evidence = r.json()["verification"]["supporting"] + r.json()["verification"]["contradicting"]
    assert {item["name"] for item in evidence} <= expected(
        "none", "mine_private", "mine_shared", "theirs_shared"
    )
    assert evidence


def test_search_reads_through_the_selector(graph, api, user, calls):
    r = api.post("/api/v1/search", {"query": QUERY, "top_k_memories": 10}, format="json")
    assert r.status_code == 200, r.json()
    assert [c["viewer"] for c in calls] == [user]
    found = {item["name"] for item in r.json()["memories"]["items"]}
    assert found == expected("none", "mine_private", "mine_shared", "theirs_shared")


def test_kg_search_reads_through_the_selector(graph, api, user, calls):
    r = api.get("/api/v1/kg/search/", {"q": QUERY, "top_k": 10})
    assert r.status_code == 200, r.json()
    assert [c["viewer"] for c in calls] == [user]
    assert {hit["name"] for hit in r.json()} == expected(
        "none", "mine_private", "mine_shared", "theirs_shared"
    )


def test_the_inner_voice_reads_through_the_selector(graph, api, user, calls, voice):  # noqa: F811
    r = api.post("/api/v1/inner-voice", {"query": QUERY}, format="json")
    assert r.status_code == 201, r.json()
    assert [(c["viewer"], c["own_private"]) for c in calls] == [(user, False)]
