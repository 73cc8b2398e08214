"""Injection when the HNSW index holds entries the search cannot return: dead rows (rolled back
or deleted, until a VACUUM) and rows of another model of the same dimension (until reembed).
pgvector reads at most hnsw.ef_search entries (160 here) and the query drops those rows
afterwards, so with enough of them nearer the query the search came back empty although
rows passed the threshold. The tests force the index, as the planner does at scale."""

from __future__ import annotations

import logging
import sys

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from tests.support.texts import of_its_own

pytestmark = pytest.mark.django_db

URL = "/api/v1/think"
TEXT = "Notes about the orchard pruning calendar"
CROWD = 200  # more than hnsw.ef_search


@pytest.fixture(autouse=True)
def _text_of_its_own(request, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "TEXT", of_its_own(TEXT, request.node.name))


@pytest.fixture(autouse=True)
def _index_only():
    # On a table this small the planner would sort every row exactly; at 100k rows it walks
    # the HNSW index, which is the case under test.
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_bitmapscan = off")


def think(api):
    r = api.post(URL, {"content": TEXT, "hint": "question", "injection_scale": 3}, format="json")
    assert r.status_code == 201, r.json()
    return r.json()


def _searches(captured):
    return [q["sql"] for q in captured if "kg_entity" in q["sql"] and "<=>" in q["sql"]]


def test_dead_rows_nearer_the_query_no_longer_hide_the_live_ones(api, memory, caplog):
    for batch in range(CROWD // 50):
        with pytest.raises(RuntimeError), transaction.atomic():
            for i in range(50):
                memory(about=TEXT, cosine=0.95 - i * 0.001, name=f"gone{batch}-{i}")
            raise RuntimeError("rolled back: dead rows in the index until a VACUUM")
    for i in range(3):
        memory(about=TEXT, cosine=0.5 - i * 0.05, name=f"live{i}")

    with (
        caplog.at_level(logging.INFO, logger="kg.nearest"),
        CaptureQueriesContext(connection) as captured,
    ):
        body = think(api)

    assert [item["name"] for item in body["injected"]] == ["live0", "live1", "live2"]
    # The first search came back empty; the kind was searched again, iteratively.
    assert len(_searches(captured)) == 2
    assert any("hnsw.iterative_scan" in q["sql"] for q in captured)
    assert "kg.search_crowded kinds=entity k=40 returned=[0] searchable=[3]" in caplog.text


def test_rows_of_another_model_nearer_the_query_no_longer_hide_the_current_ones(api, memory):
    old = {"embedding_provider": "local", "embedding_model": "all-MiniLM-L6-v2"}
    for i in range(CROWD):
        memory(about=TEXT, cosine=0.9 - i * 0.0005, name=f"old{i:03d}", **old)
    memory(about=TEXT, cosine=0.45, name="current")

    body = think(api)

    assert [item["name"] for item in body["injected"]] == ["current"]


def test_a_search_the_index_answers_in_full_is_not_repeated(api, memory):
    for i in range(3):
        memory(about=TEXT, cosine=0.5 - i * 0.05, name=f"m{i}")
    with CaptureQueriesContext(connection) as captured:
        body = think(api)
    assert len(body["injected"]) == 3
    assert len(_searches(captured)) == 1
    assert not any("hnsw.iterative_scan" in q["sql"] for q in captured)


def _counts(captured):
    return [q["sql"] for q in captured if "AS searchable" in q["sql"]]


def test_a_kind_without_rows_is_counted_once_in_a_while_not_on_every_think(
    api, memory, monkeypatch
):
    from kg.selectors import nearest as kg_search

    memory(about=TEXT, cosine=0.5, name="only")  # entities: one; observations: none
    with CaptureQueriesContext(connection) as captured:
        first, second = think(api), think(api)
    assert (
        [item["name"] for item in first["injected"]]
        == ["only"]
        == [item["name"] for item in second["injected"]]
    )
    counts = _counts(captured)
    # The first think counts both kinds (both searches came back short); the second counts
    # the entities only: that there are no observations is remembered for a while.
    assert len(counts) == 2
    assert "kg_observation" in counts[0] and "kg_observation" not in counts[1]

    monkeypatch.setattr(kg_search, "NONE_SEARCHABLE_SECONDS", 0.0)
    kg_search._NONE_SEARCHABLE.clear()
    with CaptureQueriesContext(connection) as captured:
        think(api), think(api)
    assert ["kg_observation" in sql for sql in _counts(captured)] == [True, True]


@pytest.mark.parametrize(
    ("version", "iterative"),
    [("0.7.4", False), ("0.8.0", True), ("0.8.5", True), ("0.10.1", True), ("1.0", True),
     ("", False), ("0", False), ("dev", False)],
)  # fmt: skip
def test_the_iterative_search_again_only_where_pgvector_has_iterative_scans(version, iterative):
    from kg.selectors.nearest import _iterative_scans, has_iterative_scans

    assert has_iterative_scans(version) is iterative
    assert _iterative_scans() is True  # this server: pgvector 0.8.5
