"""POST /api/v1/search (legacymind_search) with vectors at chosen cosines to the query: ranking,
thresholds, top-k, targets, thought ordering and filters, dimensions, clamping and errors."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from django.db import connection

from legacymind.providers.embeddings import fields_for, get_provider
from tests.thoughts.factories_read import EntityFactory, ObservationFactory, ThoughtFactory, near
from thoughts.models import Thought

pytestmark = pytest.mark.django_db
SEARCH = "/api/v1/search"
Q = "why does the export worker stall at night"
T0 = datetime(2025, 6, 1, tzinfo=UTC)


def search(api, **body):
    resp = api.post(SEARCH, {"query": Q, **body}, format="json")
    assert resp.status_code == 200, resp.json()
    return resp.json()


def memory_names(body) -> list[str]:
    return [item["name"] for item in body["memories"]["items"]]


def thought_ids(body) -> list[str]:
    return [row["id"] for row in body["thoughts"]["results"]]


@pytest.fixture
def memories(db):
    return {
        "e90": EntityFactory(name="e90", **near(Q, 0.9)),
        "o80": ObservationFactory(name="o80", **near(Q, 0.8)),
        "e50": EntityFactory(name="e50", **near(Q, 0.5)),
        "o30": ObservationFactory(name="o30", **near(Q, 0.3)),
        "e10": EntityFactory(name="e10", **near(Q, 0.1)),
    }


def test_memories_are_ranked_by_similarity_across_kinds(api, memories):
    body = search(api)
    assert memory_names(body) == ["e90", "o80", "e50", "o30", "e10"]
    items = body["memories"]["items"]
    assert [item["kind"] for item in items[:2]] == ["entity", "observation"]
    assert [item["similarity"] for item in items] == pytest.approx(
        [0.9, 0.8, 0.5, 0.3, 0.1], abs=1e-3
    )
    assert items[0]["entity_type"] == "technology"
    assert items[1]["entity_type"] is None
    assert body["embedding"] == {"provider": "hash", "model": "feature-hash-384", "dim": 384}
    assert body["thoughts"] is None  # thoughts are searched only on request


def test_sim_thresh_drops_weaker_memories_and_top_k_memories_caps_the_merged_list(api, memories):
    assert memory_names(search(api, sim_thresh=0.45)) == ["e90", "o80", "e50"]
    assert memory_names(search(api, sim_thresh=0.85)) == ["e90"]
    assert memory_names(search(api, top_k_memories=2)) == ["e90", "o80"]


def test_target_picks_the_kind_of_memory(api, memories):
    assert memory_names(search(api, target="entity")) == ["e90", "e50", "e10"]
    assert memory_names(search(api, target="observation")) == ["o80", "o30"]
    only_thoughts = search(api, target="thoughts")
    assert only_thoughts["memories"]["items"] == []
    assert only_thoughts["thoughts"]["results"] == []


def test_thoughts_are_ranked_by_similarity_above_the_threshold(api, user, memories):
    t7 = ThoughtFactory(owner=user, **near(Q, 0.7))
    t9 = ThoughtFactory(owner=user, **near(Q, 0.9))
    ThoughtFactory(owner=user, **near(Q, 0.2))
    body = search(api, include_thoughts=True, sim_thresh=0.45)
    assert thought_ids(body) == [str(t9.pk), str(t7.pk)]
    assert body["thoughts"]["total"] == 2
    assert body["thoughts"]["top_k"] == 5
    assert body["thoughts"]["order"] == "similarity"
    first = body["thoughts"]["results"][0]
    assert first["similarity"] == pytest.approx(0.9, abs=1e-3)
    assert first["content"] == t9.content
    assert memory_names(body) == ["e90", "o80", "e50"]  # the threshold applies to both


def test_top_k_thoughts_limits_the_thoughts(api, user):
    made = [ThoughtFactory(owner=user, **near(Q, 0.5 + i / 20)) for i in range(8)]
    body = search(api, target="thoughts", top_k_thoughts=3)
    assert thought_ids(body) == [str(t.pk) for t in reversed(made[-3:])]


def test_thought_order_by_creation_and_the_continuity_default(api, user):
    late_close = ThoughtFactory(owner=user, session_id="s", created_at=T0, **near(Q, 0.9))
    early_far = ThoughtFactory(
        owner=user, session_id="s", created_at=T0 - timedelta(days=1), **near(Q, 0.6)
    )
    ThoughtFactory(owner=user, session_id="s", created_at=T0 - timedelta(days=2), **near(Q, 0.1))
    ThoughtFactory(owner=user, session_id="other", **near(Q, 0.95))
    oldest_first = search(api, target="thoughts", session_id="s", sim_thresh=0.5)
    # A session reads as a line of reasoning: oldest first unless an order is asked for.
    assert oldest_first["thoughts"]["order"] == "created_at_asc"
    assert thought_ids(oldest_first) == [str(early_far.pk), str(late_close.pk)]
    newest_first = search(
        api, target="thoughts", session_id="s", sim_thresh=0.5, order="created_at_desc"
    )
    assert thought_ids(newest_first) == [str(late_close.pk), str(early_far.pk)]
    by_similarity = search(api, target="thoughts", session_id="s", order="similarity")
    assert thought_ids(by_similarity)[0] == str(late_close.pk)


def test_thought_filters_narrow_the_search(api, user):
    head = ThoughtFactory(owner=user, created_at=T0 - timedelta(days=9), **near(Q, 0.5))
    human = ThoughtFactory(
        owner=user,
        origin="human",
        confidence=0.9,
        chain_id="c",
        created_at=T0,
        tags=["plan", "idea"],
        mode="plan",
        **near(Q, 0.8),
    )
    tool = ThoughtFactory(
        owner=user,
        origin="tool",
        confidence=0.3,
        previous_thought=head,
        created_at=T0 + timedelta(days=3),
        tags=["plan"],
        session_id="s-1",
        **near(Q, 0.8),
    )

    def found(**filters) -> set[str]:
        return set(thought_ids(search(api, target="thoughts", **filters)))

    assert found(origin="tool") == {str(tool.pk)}
    assert found(confidence_gte=0.5) == {str(human.pk)}
    assert found(confidence_lte=0.5) == {str(tool.pk)}
    assert found(chain_id="c") == {str(human.pk)}
    assert found(previous_thought_id=f"thoughts:{head.pk}") == {str(tool.pk)}
    assert found(date_from="2025-06-01", date_to="2025-06-02") == {str(human.pk)}
    assert found(date_from="2025-06-04") == {str(tool.pk)}
    # Array, text and range filters are bound on the server with the vector (binding_cursor):
    # each keeps its meaning there.
    assert found(tags=["plan"]) == {str(human.pk), str(tool.pk)}
    assert found(tags=["idea", "plan"], tags_match="all") == {str(human.pk)}
    assert found(tags=["idea", "debug"], tags_match="any") == {str(human.pk)}
    assert found(mode="plan") == {str(human.pk)}
    assert found(session_id="s-1") == {str(tool.pk)}
    assert found(origin="tool", confidence_gte=0.2, confidence_lte=0.4) == {str(tool.pk)}


def test_chain_id_also_limits_memories_to_those_drawn_from_that_chain(api, user):
    in_chain = ThoughtFactory(owner=user, chain_id="c")
    elsewhere = ThoughtFactory(owner=user, chain_id="d")
    ObservationFactory(name="from chain", source_thought=in_chain, **near(Q, 0.6))
    ObservationFactory(name="from elsewhere", source_thought=elsewhere, **near(Q, 0.9))
    EntityFactory(name="unsourced", **near(Q, 0.9))
    assert memory_names(search(api, chain_id="c")) == ["from chain"]


def test_rows_of_another_dimension_are_never_compared(api, user):
    provider = get_provider()
    q = provider.embed([Q])[0]
    other_dim = np.concatenate([q, np.zeros(1536 - len(q), dtype=np.float32)])
    wide = fields_for(provider, other_dim) | {"embedding_dim": 1536, "embedding_model": "big"}
    EntityFactory(name="wide", **wide)
    ThoughtFactory(owner=user, **wide)
    EntityFactory(name="narrow", **near(Q, 0.4))
    body = search(api, include_thoughts=True)
    assert memory_names(body) == ["narrow"]
    assert body["thoughts"]["results"] == []


def test_rows_of_another_model_of_the_same_dimension_are_never_compared(api, user):
    # After a change of model, rows keep the old model's vectors until ``reembed`` runs: a
    # vector equal to the query's under another model's name is no match at all.
    old = near(Q, 0.99) | {"embedding_provider": "local", "embedding_model": "all-MiniLM-L6-v2"}
    assert old["embedding_dim"] == get_provider().dim
    EntityFactory(name="old model", **old)
    ObservationFactory(name="old observation", **old)
    ThoughtFactory(owner=user, **old)
    EntityFactory(name="current", **near(Q, 0.4))
    mine = ThoughtFactory(owner=user, **near(Q, 0.3))
    for order in ("similarity", "created_at_desc"):
        body = search(api, include_thoughts=True, order=order)
        assert memory_names(body) == ["current"]
        assert thought_ids(body) == [str(mine.pk)]


def test_own_thoughts_are_found_when_other_users_thoughts_crowd_the_index(api, user, other_user):
    # 400 nearer thoughts of another user fill every HNSW candidate list (ef_search 40), so the
    # index alone returns none of alice's; the search must still find them.
    Thought.objects.bulk_create(
        Thought(owner=other_user, content=f"crowd {i}", **near(Q, 0.97)) for i in range(400)
    )
    mine = [ThoughtFactory(owner=user, **near(Q, c)) for c in (0.3, 0.4, 0.5)]
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_sort = off")  # let the planner take the HNSW index
    body = search(api, target="thoughts", top_k_thoughts=3)
    assert thought_ids(body) == [str(t.pk) for t in reversed(mine)]


def test_numbers_out_of_range_are_clamped_and_strings_accepted(api, user, memories):
    body = search(api, include_thoughts=True, top_k_thoughts=500, top_k_memories="2")
    assert body["thoughts"]["top_k"] == 50
    assert memory_names(body) == ["e90", "o80"]
    assert memory_names(search(api, sim_thresh=-4)) == ["e90", "o80", "e50", "o30", "e10"]
    assert memory_names(search(api, sim_thresh="7")) == []  # clamped to 1.0
    assert memory_names(search(api, top_k_memories=0)) == ["e90"]  # clamped to 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "query"),
        ({"query": ""}, "query"),
        ({"query": Q, "order": "random"}, "order"),
        ({"query": Q, "target": "relationship"}, "target"),
        ({"query": Q, "top_k_memories": "many"}, "top_k_memories"),
        ({"query": Q, "sim_thresh": "high"}, "sim_thresh"),
        ({"query": Q, "include_thoughts": "perhaps"}, "include_thoughts"),
        ({"query": Q, "origin": "alien"}, "origin"),
        ({"query": Q, "date_to": "June"}, "date_to"),
        ({"query": Q, "branch_from": "thoughts:xyz"}, "branch_from"),
    ],
)
def test_bad_search_input_is_a_400_naming_the_field(api, body, field):
    resp = api.post(SEARCH, body, format="json")
    assert resp.status_code == 400
    assert resp.json()["error_code"] == "invalid"
    assert list(resp.json()["fields"]) == [field]


def test_search_needs_authentication(anon_api):
    resp = anon_api.post(SEARCH, {"query": Q}, format="json")
    assert resp.status_code == 401


def test_embedding_failure_is_a_503_envelope(api, settings, openai_stub):
    settings.EMBEDDING_PROVIDER = "openai"
    settings.OPENAI_API_KEY = "test-key"
    settings.OPENAI_BASE_URL = openai_stub.base_url
    settings.EMBEDDING_MAX_RETRIES = 0
    openai_stub.fail_next(500, times=1)
    resp = api.post(SEARCH, {"query": Q}, format="json")
    assert resp.status_code == 503
    assert resp.json()["error_code"] == "embedding_unavailable"
    assert set(resp.json()) == {"error_code", "detail", "fields"}
