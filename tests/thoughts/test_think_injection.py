"""Memory injection through POST /api/v1/think, with KG vectors at chosen cosines to the
thought's hash embedding. Defaults (specs/README.md): t1 0.60, t2 0.40, t3 0.25, floor 0.15."""

from __future__ import annotations

import sys
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from kg.models import Entity, Observation
from tests.support.texts import of_its_own
from tests.thoughts.factories import EntityFactory, ObservationFactory, ThoughtFactory
from thoughts.models import Thought

pytestmark = pytest.mark.django_db

URL = "/api/v1/think"
TEXT = "Notes about the garden irrigation schedule"


@pytest.fixture(autouse=True)
def _text_of_its_own(request, monkeypatch):
    """Each test thinks about a text of its own (``of_its_own``: earlier tests' dead rows)."""
    monkeypatch.setattr(sys.modules[__name__], "TEXT", of_its_own(TEXT, request.node.name))


def think(api, **payload):
    r = api.post(URL, {"content": TEXT, "hint": "question", **payload}, format="json")
    assert r.status_code == 201, r.json()
    return r.json()


def names(body):
    return [item["name"] for item in body["injected"]]


def test_scale_zero_injects_nothing(api, memory):
    memory(about=TEXT, cosine=0.99, name="close")
    body = think(api, injection_scale=0)
    assert body["injected"] == []
    assert body["delegated_result"]["memories_injected"] == 0
    thought = Thought.objects.get()
    assert thought.injected_memories == [] and thought.enriched_content is None


@pytest.mark.parametrize(
    ("scale", "inside", "outside"), [(1, 0.62, 0.58), (2, 0.42, 0.38), (3, 0.27, 0.23)]
)
def test_each_scale_applies_its_threshold_to_similarity(api, memory, scale, inside, outside):
    memory(about=TEXT, cosine=inside, name="inside")
    memory(about=TEXT, cosine=outside, name="outside")
    body = think(api, injection_scale=scale)
    assert names(body) == ["inside"]
    item = body["injected"][0]
    assert item["reason"] == "threshold"
    assert item["similarity"] == pytest.approx(inside, abs=1e-4)
    assert item["kind"] == "entity" and item["rank"] == 1
    assert body["telemetry"]["injection"]["threshold"] == {1: 0.6, 2: 0.4, 3: 0.25}[scale]


@pytest.mark.parametrize(("scale", "limit"), [(1, 5), (2, 10), (3, 20)])
def test_each_scale_injects_at_most_its_limit(
    api, memory, scale, limit, django_capture_on_commit_callbacks
):
    for i in range(limit + 3):
        memory(about=TEXT, cosine=0.9 - i * 0.005, name=f"m{i:02d}")
    with django_capture_on_commit_callbacks(execute=True):
        body = think(api, injection_scale=scale)
    assert body["delegated_result"]["memories_injected"] == limit
    assert len(body["injected"]) == limit
    assert Entity.objects.filter(access_count=1).count() == limit


def test_floor_is_used_only_when_nothing_passes_the_threshold(api, memory):
    memory(about=TEXT, cosine=0.50, name="weak")
    memory(about=TEXT, cosine=0.10, name="noise")
    body = think(api, injection_scale=1)
    assert names(body) == ["weak"]
    assert body["injected"][0]["reason"] == "floor"
    assert body["telemetry"]["injection"]["used_floor"] is True

    memory(about=TEXT, cosine=0.65, name="strong")
    body = think(api, injection_scale=1)
    assert names(body) == ["strong"]
    assert body["injected"][0]["reason"] == "threshold"


def test_thresholds_and_floor_come_from_settings(api, memory, settings):
    settings.THINK_INJECT_T1 = 0.9
    settings.THINK_INJECT_FLOOR = 0.7
    memory(about=TEXT, cosine=0.8, name="eighty")
    memory(about=TEXT, cosine=0.65, name="sixty-five")
    body = think(api, injection_scale=1)
    assert names(body) == ["eighty"]
    assert body["injected"][0]["reason"] == "floor"


def test_nothing_above_the_floor_injects_nothing(api, memory):
    memory(about=TEXT, cosine=0.05, name="noise")
    body = think(api, injection_scale=3)
    assert body["injected"] == []
    assert Thought.objects.get().enriched_content is None


def test_submode_delta_lowers_the_threshold_when_submode_retrieval_is_on(api, memory, settings):
    memory(about=TEXT, cosine=0.45, name="clear")
    memory(about=TEXT, cosine=0.37, name="borderline")  # t2 0.40; sarcastic -0.05 -> 0.35
    assert names(think(api, injection_scale=2, submode="sarcastic")) == ["clear"]

    settings.THINK_SUBMODE_RETRIEVAL = True
    body = think(api, injection_scale=2, submode="sarcastic")
    assert sorted(names(body)) == ["borderline", "clear"]
    assert body["telemetry"]["injection"]["threshold"] == pytest.approx(0.35)
    assert body["telemetry"]["injection"]["submode_delta"] == -0.05


def test_empathetic_submode_raises_the_threshold(api, memory, settings):
    settings.THINK_SUBMODE_RETRIEVAL = True
    memory(about=TEXT, cosine=0.43, name="above")
    memory(about=TEXT, cosine=0.41, name="below")  # t2 0.40 + 0.02 = 0.42
    body = think(api, injection_scale=2, submode="empathetic")
    assert names(body) == ["above"]
    assert body["telemetry"]["injection"]["threshold"] == pytest.approx(0.42)


@pytest.mark.parametrize("submode", ["philosophical", "problem_solving"])
def test_neutral_submodes_keep_the_threshold(api, memory, settings, submode):
    settings.THINK_SUBMODE_RETRIEVAL = True
    memory(about=TEXT, cosine=0.39, name="below")
    memory(about=TEXT, cosine=0.41, name="above")
    body = think(api, injection_scale=2, submode=submode)
    assert names(body) == ["above"]
    assert body["telemetry"]["injection"]["submode_delta"] == 0.0


def test_orbital_rank_prefers_significant_memories(api, memory):
    memory(about=TEXT, cosine=0.70, name="similar", significance=0.1)
    memory(about=TEXT, cosine=0.66, name="significant", significance=0.9)
    body = think(api, injection_scale=1)
    assert names(body) == ["significant", "similar"]
    assert [i["rank"] for i in body["injected"]] == [1, 2]
    assert body["injected"][0]["score"] > body["injected"][1]["score"]


def test_orbital_rank_prefers_recent_and_often_used_memories(api, memory):
    year_ago = timezone.now() - timedelta(days=365)
    memory(about=TEXT, cosine=0.70, name="stale", last_accessed=year_ago)
    memory(about=TEXT, cosine=0.66, name="fresh")
    memory(about=TEXT, cosine=0.68, name="popular", access_count=50, last_accessed=year_ago)
    body = think(api, injection_scale=1)
    assert names(body) == ["fresh", "popular", "stale"]


def test_orbital_weights_are_configurable(api, memory, settings):
    settings.THINK_ORBITAL_W_RECENCY = 0.0
    settings.THINK_ORBITAL_W_SIGNIFICANCE = 0.0
    settings.THINK_ORBITAL_W_ACCESS = 0.0
    memory(about=TEXT, cosine=0.70, name="similar", significance=0.0)
    memory(about=TEXT, cosine=0.66, name="significant", significance=1.0, access_count=99)
    body = think(api, injection_scale=1)
    assert names(body) == ["similar", "significant"]
    assert body["injected"][0]["score"] == pytest.approx(0.6 * 0.70, abs=1e-3)


def test_a_high_score_does_not_bypass_the_similarity_threshold(api, memory):
    memory(about=TEXT, cosine=0.61, name="passes")
    memory(about=TEXT, cosine=0.55, name="famous", significance=1.0, access_count=1000)
    body = think(api, injection_scale=1)
    assert names(body) == ["passes"]


def test_used_memories_get_their_access_count_and_last_accessed_bumped_after_commit(
    api, memory, django_capture_on_commit_callbacks
):
    used = memory(about=TEXT, cosine=0.8, name="used")
    unused = memory(about=TEXT, cosine=0.1, name="unused")
    obs = memory(about=TEXT, cosine=0.75, kind="observation", name="seen", access_count=4)
    before = timezone.now()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        think(api, injection_scale=1)
    used.refresh_from_db()
    assert used.access_count == 0  # not inside the thought's own write
    for callback in callbacks:
        callback()
    used.refresh_from_db(), unused.refresh_from_db(), obs.refresh_from_db()
    assert used.access_count == 1 and used.last_accessed >= before
    assert obs.access_count == 5 and obs.last_accessed >= before
    assert unused.access_count == 0 and unused.last_accessed is None


def test_last_accessed_never_moves_back(api, memory, django_capture_on_commit_callbacks):
    later = timezone.now() + timedelta(days=1)
    used = memory(about=TEXT, cosine=0.8, name="used", last_accessed=later)
    with django_capture_on_commit_callbacks(execute=True):
        think(api, injection_scale=1)
    used.refresh_from_db()
    assert used.access_count == 1 and used.last_accessed == later


def test_injected_memories_and_enriched_content_are_persisted_in_the_spec_format(api, memory):
    memory(about=TEXT, cosine=0.80, name="Drip lines", entity_type="equipment", significance=0.5)
    memory(about=TEXT, cosine=0.70, kind="observation", name="Tomatoes wilt", description="at noon")
    body = think(api, injection_scale=1, submode="philosophical")
    thought = Thought.objects.get()
    assert thought.enriched_content == (
        "Submode: philosophical\n"
        "Nearby entities:\n"
        "- (0.80) Drip lines [equipment]\n"
        "- (0.70) Tomatoes wilt [at noon]\n"
    )
    assert [(m["kind"], m["name"], m["rank"]) for m in thought.injected_memories] == [
        ("entity", "Drip lines", 1),
        ("observation", "Tomatoes wilt", 2),
    ]
    assert thought.injected_memories[0]["similarity"] == pytest.approx(0.80, abs=1e-4)
    assert thought.injected_memories == body["injected"]
    assert body["injected"][1]["ref"].startswith("kgo:")


def test_enriched_content_lists_the_first_five(api, memory):
    for i in range(8):
        memory(about=TEXT, cosine=0.9 - i * 0.01, name=f"m{i}")
    body = think(api, injection_scale=2)
    assert len(body["injected"]) == 8
    lines = Thought.objects.get().enriched_content.splitlines()
    assert lines[0] == "Nearby entities:" and len(lines) == 6


def test_kg_rows_without_a_vector_are_embedded_on_the_way_and_saved(api):
    row = EntityFactory(name="garden irrigation schedule", entity_type="concept")
    assert row.embedding is None
    body = think(api, content="garden irrigation schedule", injection_scale=1)
    row.refresh_from_db()
    assert row.embedding_dim == 384 and row.embedding_provider == "hash"
    assert row.embedding_model == "feature-hash-384" and row.embedded_at is not None
    assert body["telemetry"]["injection"]["backfilled"] == 1
    assert names(body) == ["garden irrigation schedule"]


def test_the_search_and_the_unembedded_probe_share_one_query(api, memory):
    # Every think asks whether some KG rows still lack a vector; the question rides in the
    # search's own round trip instead of costing one of its own.
    memory(about=TEXT, cosine=0.5, name="embedded")
    with CaptureQueriesContext(connection) as captured:
        body = think(api, injection_scale=3)
    assert names(body) == ["embedded"]
    kg_queries = [q["sql"] for q in captured if "kg_entity" in q["sql"]]
    # One search, carrying the probe. It came back short (one row of 40), so one more query
    # counts the rows it could have returned: one, so the search was not crowded
    # (test_think_crowded) and there is nothing to widen to (it searched 40, 160 and 500 rows).
    searches = [sql for sql in kg_queries if "<=>" in sql]
    assert len(searches) == 1 and "embedding_dim IS NULL" in searches[0]
    assert [sql for sql in kg_queries if "<=>" not in sql] == [
        next(sql for sql in kg_queries if "AS searchable" in sql)
    ]
    assert body["telemetry"]["injection"]["backfilled"] == 0


@pytest.mark.parametrize(("cap", "entities", "observations"), [(3, 2, 1), (1, 1, 0), (0, 0, 0)])
def test_backfill_embeds_at_most_the_configured_rows_entities_first(
    api, settings, cap, entities, observations
):
    settings.THINK_INJECT_BACKFILL_MAX = cap
    for i in range(2):
        EntityFactory(name=f"garden entity {i}")
        ObservationFactory(name=f"garden observation {i}", description="irrigation")
    body = think(api, injection_scale=1)
    assert body["telemetry"]["injection"]["backfilled"] == entities + observations
    assert Entity.objects.filter(embedding_dim=384).count() == entities
    assert Observation.objects.filter(embedding_dim=384).count() == observations


def test_rows_of_another_dimension_are_never_compared(api):
    EntityFactory(name="tiny", embedding=[1.0, 0.0, 0.0], embedding_dim=3)
    body = think(api, injection_scale=3)
    assert body["injected"] == []


def test_rows_of_another_model_of_the_same_dimension_are_never_compared(api, memory):
    # Left over from a change of model (until ``reembed``): same size, not the same space.
    old = {"embedding_provider": "local", "embedding_model": "all-MiniLM-L6-v2"}
    memory(about=TEXT, cosine=0.95, name="old model", **old)
    memory(about=TEXT, cosine=0.95, name="old observation", kind="observation", **old)
    memory(about=TEXT, cosine=0.30, name="current")
    body = think(api, injection_scale=3)
    assert names(body) == ["current"]
    assert Entity.objects.get(name="old model").embedding_dim == 384


def test_the_candidate_pool_comes_from_the_mode_setting(api, memory, settings):
    settings.KG_CANDIDATES_THINK_CONVO = 2
    settings.KG_CANDIDATES_THINK_DEBUG = 3
    for i in range(6):
        memory(about=TEXT, cosine=0.9 - i * 0.02, name=f"m{i}")
    body = think(api, injection_scale=2)
    assert names(body) == ["m0", "m1"]
    assert body["telemetry"]["injection"]["pool"] == 2
    body = think(api, injection_scale=2, hint="debug")
    assert len(body["injected"]) == 3
    assert body["telemetry"]["injection"]["pool"] == 3


def test_memories_from_another_users_private_thought_are_never_injected(
    api, other_api, user, other_user, memory, django_capture_on_commit_callbacks
):
    private = ThoughtFactory(owner=other_user, is_private=True)
    public = ThoughtFactory(owner=other_user, is_private=False)
    memory(about=TEXT, cosine=0.9, name="bob-private", source_thought=private)
    memory(about=TEXT, cosine=0.8, name="bob-public", source_thought=public)
    memory(about=TEXT, cosine=0.85, kind="observation", name="bob-obs", source_thought=private)
    memory(about=TEXT, cosine=0.7, name="shared")

    with django_capture_on_commit_callbacks(execute=True):
        alice = think(api, injection_scale=1)
    assert sorted(names(alice)) == ["bob-public", "shared"]
    assert "bob-private" not in (Thought.objects.get(owner=user).enriched_content or "")

    with django_capture_on_commit_callbacks(execute=True):
        bob = other_api.post(URL, {"content": TEXT, "injection_scale": 1}, format="json").json()
    assert sorted(names(bob)) == ["bob-obs", "bob-private", "bob-public", "shared"]
    # Alice's request did not touch Bob's private memories.
    assert Entity.objects.get(name="bob-private").access_count == 1
    assert Observation.objects.get(name="bob-obs").access_count == 1


def test_the_whole_pool_is_considered_when_many_memories_pass(api, memory, settings):
    # 45 memories pass t3; the least similar one is by far the most significant. The search
    # must reach past the first 40 neighbours to find it.
    settings.THINK_ORBITAL_W_SIGNIFICANCE = 5.0
    for i in range(44):
        memory(about=TEXT, cosine=0.75 - i * 0.01, name=f"m{i:02d}", significance=0.0)
    memory(about=TEXT, cosine=0.30, name="deep", significance=1.0)
    body = think(api, injection_scale=3)
    assert body["injected"][0]["name"] == "deep"
    assert body["telemetry"]["injection"]["candidates_passing"] == 45


def test_a_pool_smaller_than_the_related_rows_caps_the_search(api, memory, settings):
    settings.KG_CANDIDATES_THINK_CONVO = 44
    settings.THINK_ORBITAL_W_SIGNIFICANCE = 5.0
    for i in range(44):
        memory(about=TEXT, cosine=0.75 - i * 0.005, name=f"m{i:02d}", significance=0.0)
    memory(about=TEXT, cosine=0.30, name="deep", significance=1.0)  # the 45th neighbour
    body = think(api, injection_scale=3)
    assert "deep" not in names(body)
    # The index search is approximate: at most the pool, and nearly all of it.
    assert 40 <= body["telemetry"]["injection"]["candidates_passing"] <= 44


def test_the_floor_goes_on_from_the_threshold_search_and_reaches_the_whole_pool(api, memory):
    # Nothing passes t3 (0.25); 45 memories clear the floor (0.15), the least similar of them
    # by far the most significant. The floor's search must reach past the first 40 neighbours,
    # and it starts from the rows the threshold's search found instead of searching them again.
    for i in range(44):
        memory(about=TEXT, cosine=0.24 - i * 0.0015, name=f"m{i:02d}", significance=0.0)
    memory(about=TEXT, cosine=0.16, name="deep", significance=1.0)
    with CaptureQueriesContext(connection) as captured:
        body = think(api, injection_scale=3)
    assert body["injected"][0]["name"] == "deep"
    assert body["injected"][0]["reason"] == "floor"
    assert body["telemetry"]["injection"]["candidates_passing"] == 45
    searches = [q["sql"] for q in captured if "kg_entity" in q["sql"] and "<=>" in q["sql"]]
    # One search of 40 rows for the threshold, then one of the whole pool (500) for the floor:
    # not the 40 rows again, nor a 160-row step on the way.
    assert [("LIMIT 40" in sql, "LIMIT 500" in sql) for sql in searches] == [
        (True, False),
        (False, True),
    ]


def test_the_floor_applies_when_only_others_private_memories_pass_the_threshold(
    api, other_user, memory
):
    private = ThoughtFactory(owner=other_user, is_private=True)
    memory(about=TEXT, cosine=0.9, name="bob-private", source_thought=private)
    memory(about=TEXT, cosine=0.2, name="faint")
    body = think(api, injection_scale=3)
    assert names(body) == ["faint"]
    assert body["injected"][0]["reason"] == "floor"
