"""``nearest()``: the partial HNSW index per dimension, never comparing vectors of different
sizes or models, and results ordered by cosine distance."""

from __future__ import annotations

import itertools
import struct

import numpy as np
import pytest
from django.db import DataError, connection
from django.test.utils import CaptureQueriesContext

from kg.models import Entity
from legacymind.vectors.binding import BinaryVector, binding_cursor, vector_literal
from legacymind.vectors.search import nearest, nearest_queryset
from thoughts.models import Thought

pytestmark = pytest.mark.django_db

RNG = np.random.default_rng(7)


def _unit(n: int, dim: int) -> np.ndarray:
    matrix = RNG.normal(size=(n, dim)).astype(np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def _entities(vectors: np.ndarray, prefix: str, model: str | None = None) -> list[Entity]:
    dim = vectors.shape[1]
    return Entity.objects.bulk_create(
        Entity(
            name=f"{prefix}-{i}",
            entity_type="concept",
            embedding=v,
            embedding_provider="test",
            embedding_model=model or f"test-{dim}",
            embedding_dim=dim,
        )
        for i, v in enumerate(vectors)
    )


def _force_index_paths() -> None:
    # On a small table a sequential scan, or the embedding_dim btree and a sort, is cheaper
    # (pgvector's cost estimate grows with hnsw.ef_search); switching those off shows the index
    # can serve the query exactly as written (the planner only uses a partial index it can
    # prove). At 100k rows the planner picks it by itself (docs/benchmarks.md).
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_bitmapscan = off")


@pytest.mark.parametrize("dim", [384, 1536])
def test_nearest_uses_the_partial_hnsw_index_of_its_dimension(dim):
    _entities(_unit(50, dim), "e")
    _force_index_paths()

    plan = nearest_queryset(
        Entity.objects.all(), _unit(1, dim)[0].tolist(), 5, model=f"test-{dim}"
    ).explain()

    assert f"Index Scan using kg_entity_emb_{dim}" in plan
    assert "Sort" not in plan


def test_nearest_on_thoughts_uses_the_thought_index(user):
    vectors = _unit(20, 384)
    Thought.objects.bulk_create(
        Thought(owner=user, content=f"t{i}", embedding=v, embedding_dim=384, embedding_model="m")
        for i, v in enumerate(vectors)
    )
    _force_index_paths()

    plan = nearest_queryset(
        Thought.objects.filter(owner=user), vectors[0].tolist(), 3, model="m"
    ).explain()

    assert "Index Scan using thought_emb_384" in plan


@pytest.mark.parametrize("dim", [384, 1536])
def test_the_compiled_search_with_its_binary_vector_uses_the_index_too(dim):
    """``nearest()`` runs the compiled SQL with the query vector bound on the server, in
    binary: the vector's cast types the parameter, and the planner still orders by the
    partial index of its dimension."""
    from legacymind.vectors import search as module

    _entities(_unit(50, dim), "e")
    _force_index_paths()
    query = _unit(1, dim)[0].tolist()
    compiled = module._nearest_compiled(Entity.objects.all(), dim, 5, f"test-{dim}")
    assert compiled is not None

    with binding_cursor("default") as cursor:
        cursor.execute("EXPLAIN " + compiled.sql, compiled.params(query))
        plan = "\n".join(row[0] for row in cursor.fetchall())

    assert f"Index Scan using kg_entity_emb_{dim}" in plan
    assert "Sort" not in plan


def test_a_binary_query_vector_is_refused_when_malformed_and_checked_by_the_server():
    with pytest.raises(ValueError, match="1 to 16000 values"):
        BinaryVector([])
    with pytest.raises(ValueError, match="1 to 16000 values"):
        BinaryVector([[0.1, 0.2], [0.3, 0.4]])
    # The cast checks the dimension the server receives; the error is Django's own.
    with binding_cursor("default") as cursor, pytest.raises(DataError, match="expected 3"):
        cursor.execute("SELECT %s::vector(3)", [BinaryVector([0.5, 0.25])])


def test_the_binding_cursor_is_counted_and_logged_like_djangos_own():
    """Searches go through Django's cursor wrapper: query counts, DEBUG logging and execute
    wrappers see them as they see any other query."""
    seen = []

    def wrapper(execute, sql, params, many, context):
        seen.append(sql)
        return execute(sql, params, many, context)

    with (
        CaptureQueriesContext(connection) as queries,
        connection.execute_wrapper(wrapper),
        binding_cursor("default") as cursor,
    ):
        cursor.execute("SELECT %s::vector(2)::text", [BinaryVector([0.5, 0.25])])
        assert cursor.fetchone() == ("[0.5,0.25]",)

    assert seen == ["SELECT %s::vector(2)::text"]
    assert len(queries) == 1 and "vector(2)" in queries[0]["sql"]


def _exact_plans_only() -> None:
    # HNSW is approximate, and index entries of rows other tests rolled back stay in the graph
    # until a vacuum: exact answers need the exact plan.
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_indexscan = off")


def test_nearest_returns_the_exact_top_k_ordered_by_distance():
    vectors = _unit(200, 384)
    rows = _entities(vectors, "e")
    query = _unit(1, 384)[0]
    _exact_plans_only()

    found = list(nearest(Entity.objects.all(), query.tolist(), 10, model="test-384"))

    exact = np.argsort(-(vectors @ query))[:10]
    assert [e.pk for e in found] == [rows[i].pk for i in exact]
    for entity, i in zip(found, exact, strict=True):
        assert entity.distance == pytest.approx(1 - float(vectors[i] @ query), abs=1e-5)
        assert entity.similarity == pytest.approx(1 - entity.distance)


def test_nearest_through_the_index_is_ordered_by_true_distance():
    vectors = _unit(200, 384)
    rows = {e.pk: i for i, e in enumerate(_entities(vectors, "e"))}
    query = _unit(1, 384)[0]
    _force_index_paths()

    found = list(nearest(Entity.objects.all(), query.tolist(), 10, model="test-384"))

    assert len(found) == 10
    # The index orders by half-precision distance: rows closer than that may swap.
    distances = [e.distance for e in found]
    assert all(a <= b + 2e-3 for a, b in itertools.pairwise(distances))
    for entity in found:
        assert entity.distance == pytest.approx(
            1 - float(vectors[rows[entity.pk]] @ query), abs=1e-5
        )


def test_the_index_holds_half_precision_but_similarity_is_full_precision():
    # Half precision keeps an 11-bit mantissa: a similarity computed from the index's copies is
    # off by ~1e-5; the column's float32 vectors give it to ~1e-7.
    stored = _unit(40, 384)
    vectors = stored.astype(np.float64)
    rows = {e.pk: i for i, e in enumerate(_entities(stored, "e"))}
    query = stored[0].astype(np.float64)
    _force_index_paths()

    found = nearest_queryset(Entity.objects.all(), query.tolist(), 5, model="test-384")

    assert "Index Scan using kg_entity_emb_384" in found.explain()
    half = stored.astype(np.float16).astype(np.float64)
    for entity in found:
        row = stored[rows[entity.pk]].astype(np.float64)
        exact = row @ query / (np.linalg.norm(row) * np.linalg.norm(query))
        assert entity.similarity == pytest.approx(exact, abs=2e-7)
    off = [
        abs(h @ query / (np.linalg.norm(h) * np.linalg.norm(query)) - v @ query)
        for h, v in zip(half, vectors, strict=True)
    ]
    assert max(off) > 1e-5  # the test data is one where half precision would show
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'kg_entity_emb_384'")
        assert "halfvec_cosine_ops" in cursor.fetchone()[0]


def test_nearest_never_compares_rows_of_another_dimension():
    small = _entities(_unit(5, 3), "small")
    mid = _entities(_unit(5, 384), "mid")
    big = _entities(_unit(5, 1536), "big")
    Entity.objects.create(name="no-vector", entity_type="concept")
    _exact_plans_only()

    for rows, dim in ((small, 3), (mid, 384), (big, 1536)):
        found = list(nearest(Entity.objects.all(), _unit(1, dim)[0].tolist(), 50, model=None))
        assert {e.pk for e in found} == {e.pk for e in rows}


def test_nearest_never_compares_rows_of_another_model_of_the_same_dimension():
    # Two models of one size share the partial index but not a space: a query embedded by one
    # model must not rank the other's vectors, however close they happen to lie.
    vectors = _unit(6, 384)
    ours = _entities(vectors[:3], "ours", model="model-a")
    theirs = _entities(vectors[3:], "theirs", model="model-b")
    query = vectors[3]  # identical to one of model-b's rows
    _exact_plans_only()

    found = list(nearest(Entity.objects.all(), query.tolist(), 10, model="model-a"))
    anyone = list(nearest(Entity.objects.all(), query.tolist(), 10, model=None))

    assert {e.pk for e in found} == {e.pk for e in ours}
    assert anyone[0].pk == theirs[0].pk
    assert {e.pk for e in anyone} == {e.pk for e in ours + theirs}


def test_nearest_searches_an_unindexed_dimension_exactly():
    vectors = _unit(30, 8)
    rows = _entities(vectors, "e")
    query = vectors[3]

    qs = nearest_queryset(Entity.objects.all(), query.tolist(), 3, model="test-8")

    assert qs[0].pk == rows[3].pk
    assert "kg_entity_emb_" not in qs.explain()


def test_nearest_rejects_an_empty_vector_and_returns_nothing_for_k_zero():
    _entities(_unit(3, 384), "e")

    with pytest.raises(ValueError, match="empty vector"):
        nearest(Entity.objects.all(), [], 5, model="test-384")
    assert list(nearest(Entity.objects.all(), _unit(1, 384)[0].tolist(), 0, model=None)) == []


def test_nearest_compiles_once_per_base_query_and_searches_with_each_new_vector():
    from legacymind.vectors import search as module

    vectors = _unit(60, 384)
    _entities(vectors, "e")
    _exact_plans_only()
    module._COMPILED.clear()

    for query in _unit(5, 384):  # a fresh base queryset each call, as callers make them
        found = nearest(Entity.objects.only("id", "name"), query.tolist(), 7, model="test-384")
        built = list(
            nearest_queryset(Entity.objects.only("id", "name"), query.tolist(), 7, model="test-384")
        )
        assert [(e.pk, e.similarity) for e in found] == [(e.pk, e.similarity) for e in built]
        assert [e.pk for e in found] == [e.pk for e in built]
        assert found[0].get_deferred_fields() == built[0].get_deferred_fields()
        assert "embedding" in found[0].get_deferred_fields()
    assert len(module._COMPILED) == 1  # five searches, one compiled query
    # What runs from the cache is the ORM's own query with the new vector put in, so the
    # plan tests above (on nearest_queryset) hold for it too.
    query = _unit(1, 384)[0].tolist()
    base = Entity.objects.only("id", "name")
    compiled = module._nearest_compiled(base, 384, 7, "test-384")
    assert compiled is not None
    sql, params = nearest_queryset(base, query, 7, model="test-384").query.sql_with_params()
    assert compiled.sql == sql
    bound = compiled.params(query)
    literal = vector_literal(query)
    assert [p for p in params if p != literal] == [
        p for i, p in enumerate(bound) if i not in compiled.slots
    ]
    assert compiled.slots == {i for i, p in enumerate(params) if p == literal}
    for i in compiled.slots:  # the same vector, in pgvector's binary form
        assert bound[i].data == struct.pack(">HH", 384, 0) + np.asarray(query, ">f4").tobytes()

    nearest(Entity.objects.only("id", "name"), _unit(1, 384)[0].tolist(), 8, model="test-384")
    nearest(Entity.objects.filter(name__startswith="e-1"), vectors[0].tolist(), 7, model=None)
    assert len(module._COMPILED) == 3  # another k, another base query: entries of their own


def test_nearest_never_answers_one_base_query_with_another_ones_compiled_sql(user, other_user):
    """The base query's parameters are part of what is cached: a search over one owner's
    thoughts is never run with another owner's filter (or the reverse)."""
    vectors = _unit(2, 384)
    mine, theirs = Thought.objects.bulk_create(
        Thought(owner=owner, content=f"t-{owner.pk}", embedding=v, embedding_dim=384,
                embedding_model="m")
        for owner, v in ((user, vectors[0]), (other_user, vectors[1]))
    )  # fmt: skip
    _exact_plans_only()

    for _ in range(2):  # the second round runs from the cache
        for owner, row in ((user, mine), (other_user, theirs)):
            for query in vectors:
                found = nearest(Thought.objects.filter(owner=owner), query.tolist(), 5, model="m")
                assert [t.pk for t in found] == [row.pk]


def test_nearest_takes_the_orm_path_for_querysets_raw_rows_cannot_stand_for(user):
    vectors = _unit(3, 384)
    rows = _entities(vectors, "e")
    _exact_plans_only()
    query = vectors[1].tolist()

    assert nearest(Entity.objects.none(), query, 3, model="test-384") == []
    assert nearest(Entity.objects.filter(id__in=[]), query, 3, model="test-384") == []
    with_source = nearest(Entity.objects.select_related("source_thought"), query, 1, model=None)
    assert [e.pk for e in with_source] == [rows[1].pk]
    assert nearest(Entity.objects.values("name"), query, 1, model=None)[0]["name"] == "e-1"


def test_nearest_from_the_cache_makes_the_same_instances_as_the_orm_with_converted_fields():
    """Rows from the compiled search pass through each field's ``from_db_value`` (JSON, the
    vector) and carry the annotations, exactly as the ORM's instances do."""
    vectors = _unit(3, 384)
    _entities(vectors, "e")
    Entity.objects.filter(name="e-1").update(data={"why": ["kept", 1]}, aliases=["E one"])
    _exact_plans_only()
    query = vectors[1].tolist()

    for _ in range(2):  # the second call uses the kept row mapping
        found = nearest(Entity.objects.all(), query, 3, model="test-384")
        built = list(nearest_queryset(Entity.objects.all(), query, 3, model="test-384"))
        assert [e.pk for e in found] == [e.pk for e in built]
        top = found[0]
        assert top.name == "e-1" and top.data == {"why": ["kept", 1]} and top.aliases == ["E one"]
        assert np.allclose(np.asarray(top.embedding), vectors[1], atol=1e-7)
        assert top.similarity == pytest.approx(1.0, abs=1e-6)
        assert top.distance == pytest.approx(1 - top.similarity)
        for mine, orm in zip(found, built, strict=True):
            for field in Entity._meta.concrete_fields:
                a, b = getattr(mine, field.attname), getattr(orm, field.attname)
                assert type(a) is type(b), field.name
                same = np.array_equal(a, b) if isinstance(a, list | np.ndarray) else a == b
                assert same, field.name
            assert (mine.distance, mine.similarity) == (orm.distance, orm.similarity)
            assert mine._state.db == "default" and not mine._state.adding


def test_nearest_reads_timestamps_in_the_connections_time_zone_as_the_orm_does(monkeypatch):
    """The search's own cursor loads timestamps as Django's cursors do, in the connection's
    time zone, also when that differs from the zone the connection was opened with."""
    import zoneinfo

    vectors = _unit(2, 384)
    _entities(vectors, "e")
    _exact_plans_only()
    connection.ensure_connection()
    paris = zoneinfo.ZoneInfo("Europe/Paris")
    monkeypatch.setitem(connection.__dict__, "timezone", paris)  # a cached_property

    found = nearest(Entity.objects.all(), vectors[0].tolist(), 2, model="test-384")
    built = list(nearest_queryset(Entity.objects.all(), vectors[0].tolist(), 2, model="test-384"))

    assert [(e.created_at, e.created_at.tzinfo) for e in found] == [
        (e.created_at, e.created_at.tzinfo) for e in built
    ]


def test_the_binary_search_keeps_every_thought_filter_as_the_orm_reads_it(user, other_user):
    """With the query vector bound on the server, so are the base query's own parameters
    (arrays, text, numbers, timestamps, uuids): each filter of the thought list and search
    selects, through ``nearest()``, the rows the ORM's own query selects."""
    from datetime import UTC, datetime, timedelta

    from thoughts.selectors.reads import ThoughtFilters, thoughts_filter

    vectors = _unit(40, 384)
    start = datetime(2025, 6, 1, tzinfo=UTC)
    head = Thought.objects.create(owner=user, content="head", embedding=vectors[0],
                                  embedding_dim=384, embedding_model="m")  # fmt: skip
    Thought.objects.bulk_create(
        Thought(
            owner=user if i % 5 else other_user,
            content=f"t{i}",
            tags=[["plan"], ["plan", "idea"], ["debug"], []][i % 4],
            mode=["plan", "debug", "question"][i % 3],
            origin=["human", "tool"][i % 2],
            session_id=f"s-{i % 3}",
            confidence=(i % 10) / 10,
            previous_thought=head if i % 7 == 0 else None,
            embedding=v,
            embedding_dim=384,
            embedding_model="m",
        )
        for i, v in enumerate(vectors[1:], start=1)
    )
    for i in range(1, 40):  # created_at is set on insert: dated afterwards
        Thought.objects.filter(content=f"t{i}").update(created_at=start + timedelta(days=i))
    _exact_plans_only()
    query = _unit(1, 384)[0].tolist()
    cases = [
        ThoughtFilters(tags=("plan",)),
        ThoughtFilters(tags=("idea", "plan"), tags_match="all"),
        ThoughtFilters(tags=("idea", "debug"), tags_match="any"),
        ThoughtFilters(mode="plan", origin="tool"),
        ThoughtFilters(session_id="s-2", confidence_gte=0.3, confidence_lte=0.7),
        ThoughtFilters(
            created_gte=start + timedelta(days=5), created_lte=start + timedelta(days=20)
        ),
        ThoughtFilters(previous_thought_id=head.pk),
    ]
    for filters in cases:
        base = thoughts_filter(Thought.objects.filter(owner=user), filters)
        expected = set(base.values_list("pk", flat=True))
        assert expected, filters  # every case selects something, and not everything
        assert len(expected) < 40, filters
        found = nearest(thoughts_filter(Thought.objects.filter(owner=user), filters), query, 50,
                        model="m")  # fmt: skip
        built = list(nearest_queryset(base, query, 50, model="m"))
        assert {t.pk for t in found} == expected, filters
        assert [t.pk for t in found] == [t.pk for t in built], filters
