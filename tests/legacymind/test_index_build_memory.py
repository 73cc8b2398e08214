"""The memory an HNSW index build is given: enough for the graph (checked against pgvector's own
notice that the graph no longer fits), no more than the configured maintenance_work_mem, and the
session's setting put back after a re-embed's build."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import numpy as np
import pytest
from django.db import connection

from legacymind.vectors.indexes import MIN_BUILD_KB, build_memory_kb, graph_row_bytes
from legacymind.vectors.reembed import rows_reembed
from tests.kg.factories import EntityFactory

ROWS = 3_000
DIM = 384
M = 16
NO_LONGER_FITS = "hnsw graph no longer fits into maintenance_work_mem"


def test_small_tables_get_the_floor_large_ones_the_graph_and_never_more_than_the_cap():
    cap = 1024 * 1024  # 1GB in kB
    assert build_memory_kb(rows=0, dim=DIM, m=M, cap_kb=cap) == MIN_BUILD_KB
    assert build_memory_kb(rows=10_000, dim=DIM, m=M, cap_kb=cap) == MIN_BUILD_KB

    hundred_k = build_memory_kb(rows=100_000, dim=DIM, m=M, cap_kb=cap)
    graph_kb = 100_000 * graph_row_bytes(dim=DIM, m=M) / 1024
    assert graph_kb * 1.2 < hundred_k < graph_kb * 1.2 + 17 * 1024

    assert build_memory_kb(rows=1_000_000, dim=1536, m=M, cap_kb=cap) == cap
    assert build_memory_kb(rows=0, dim=DIM, m=M, cap_kb=64 * 1024) == 64 * 1024  # cap < floor
    # A wider vector and a denser graph need more.
    assert graph_row_bytes(dim=1536, m=M) > graph_row_bytes(dim=DIM, m=M)
    assert graph_row_bytes(dim=DIM, m=32) > graph_row_bytes(dim=DIM, m=M)


@pytest.fixture
def vectors_table(db) -> Iterator[str]:
    """ROWS random unit vectors of DIM, as halfvec like our indexes, in a table of their own
    (the test's transaction drops it)."""
    rng = np.random.default_rng(5)
    matrix = rng.normal(size=(ROWS, DIM)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE TABLE build_memory_probe (id int PRIMARY KEY, v halfvec({DIM}))")
        cursor.executemany(
            "INSERT INTO build_memory_probe VALUES (%s, %s::halfvec)",
            [(i, "[" + ",".join(f"{x:.6f}" for x in row) + "]") for i, row in enumerate(matrix)],
        )
    yield "build_memory_probe"


def _build_notices(table: str, memory_kb: int) -> list[str]:
    """pgvector's notices while building the index over ``table`` with ``memory_kb``."""
    notices: list[str] = []
    raw = connection.connection
    handler = lambda diag: notices.append(diag.message_primary or "")  # noqa: E731
    raw.add_notice_handler(handler)
    try:
        with connection.cursor() as cursor:
            cursor.execute("DROP INDEX IF EXISTS build_memory_probe_v")
            cursor.execute(f"SET LOCAL maintenance_work_mem = '{memory_kb}kB'")
            cursor.execute("SET LOCAL max_parallel_maintenance_workers = 0")
            cursor.execute(
                f"CREATE INDEX build_memory_probe_v ON {table} "
                f"USING hnsw (v halfvec_cosine_ops) WITH (m = {M}, ef_construction = 64)"
            )
    finally:
        raw.remove_notice_handler(handler)
    return notices


def test_the_graph_size_per_row_matches_what_pgvector_holds(vectors_table):
    """With the estimate and one allocation block (Postgres' memory contexts grow in blocks of
    up to 8MB) the graph fits in memory; with 80% of the estimate pgvector says the graph no
    longer fits and finishes on disk. If a pgvector upgrade changes its per-row size, this fails
    and GRAPH_ROW_OVERHEAD needs measuring again."""
    estimate_kb = ROWS * graph_row_bytes(dim=DIM, m=M) // 1024
    assert not any(NO_LONGER_FITS in n for n in _build_notices(vectors_table, estimate_kb + 8192))
    assert any(NO_LONGER_FITS in n for n in _build_notices(vectors_table, estimate_kb * 8 // 10))


def _setting_kb() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT setting::bigint FROM pg_settings WHERE name = 'maintenance_work_mem'"
        )
        return int(cursor.fetchone()[0])


@pytest.mark.django_db(transaction=True)
def test_a_reembed_builds_with_the_sized_memory_and_puts_the_setting_back(settings, caplog):
    settings.EMBEDDING_PROVIDER = "hash"
    settings.EMBEDDING_DIM = 384
    settings.REEMBED_INDEX_REBUILD_MIN_ROWS = 4
    for name in ("Postgres", "pgvector", "Redis", "Celery", "Django"):
        EntityFactory(name=name, entity_type="technology")
    before = _setting_kb()
    assert before > MIN_BUILD_KB  # the configured 1GB: otherwise this proves nothing

    with caplog.at_level(logging.INFO, logger="legacymind.vectors.reembed"):
        summary = rows_reembed(target="kg", batch_size=2, all_rows=True)

    assert summary.tables["kg_entities"].index_rebuilt == "kg_entity_emb_384"
    builds = [r.getMessage() for r in caplog.records if "vector_index.build" in r.getMessage()]
    assert builds == [
        f"vector_index.build index=kg_entity_emb_384 rows=5 maintenance_work_mem_kb={MIN_BUILD_KB}"
    ]
    assert _setting_kb() == before
