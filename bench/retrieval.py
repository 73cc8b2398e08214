"""Retrieval benchmark: the ``nearest`` selector (partial HNSW index) against the original
design (fetch the first 500 rows, cosine in the application) and exact brute force in numpy,
at 10k and 100k entities with clustered synthetic 384-d vectors.

    python bench/retrieval.py [--sizes 10000 100000] [--queries 200] [--ef 40 64 100 160]

It runs in its own database (see bench/_common.py: ``bench_legacymind``, never the dev data)
and empties ``kg_entity`` there for each size. The three methods answer the same queries, in
alternating blocks so that a noisy machine slows them alike. The selector runs with the
configured ``HNSW_EF_SEARCH``; the ``--ef`` table shows the trade-off around it. Latency is wall time per
query as a caller sees it (the selector called with a fresh base queryset each time and
returning model instances, its SQL compiled once per base query as in the API; numpy with the
matrix already in memory). Recall@10 is measured against the exact numpy answer.

Django's PostgreSQL cursors bind parameters client-side, so every query is planned with its
literal dimension and vector; no generic prepared plan can hide the index (or, for the
"exact in Postgres" row, the sequential scan).
"""

from __future__ import annotations

import argparse
import time
from datetime import UTC, datetime

import numpy as np
from _common import (
    load_entities,
    machine,
    percentile,
    ratio,
    timed,
    use_bench_database,
)
from django.conf import settings
from django.db import connection

from kg.models import Entity
from legacymind.vectors.search import nearest

DIM = 384
K = 10
ORIGINAL_POOL = 500
ROUNDS = 8
WAKE_CALLS = 10  # untimed calls after each pause


def clustered(rng: np.random.Generator, centres: np.ndarray, n: int, spread: float) -> np.ndarray:
    """Points around random centres; ``spread`` 1.0 puts a point ~45 degrees from its centre."""
    picks = rng.integers(0, len(centres), size=n)
    noise = rng.standard_normal((n, centres.shape[1])).astype(np.float32)
    points = centres[picks] + spread * noise / np.sqrt(centres.shape[1])
    return (points / np.linalg.norm(points, axis=1, keepdims=True)).astype(np.float32)


def load(vectors: np.ndarray) -> tuple[dict[int, int], float, float]:
    """Empty kg_entity and load ``vectors`` (see ``load_entities``).

    Returns the row index -> primary key map, the load seconds and the index build seconds.
    """
    from psycopg.types.json import Jsonb

    now = datetime.now(UTC)
    rows = (
        (f"bench-{i}", "concept", "", Jsonb({}), [], vector, "bench", "synthetic-384", DIM, now,
         0.5, 0, None, now, now)
        for i, vector in enumerate(vectors)
    )  # fmt: skip
    by_name, loaded, indexed = load_entities(rows)
    pks = {int(name.removeprefix("bench-")): pk for name, pk in by_name.items()}
    return pks, loaded, indexed


def exact_numpy(matrix: np.ndarray, query: np.ndarray) -> np.ndarray:
    sims = matrix @ query
    top = np.argpartition(-sims, K)[:K]
    return top[np.argsort(-sims[top])]


def selector(query: np.ndarray) -> list[int]:
    rows = nearest(
        Entity.objects.only("id", "name", "entity_type"), query.tolist(), K, model="synthetic-384"
    )
    return [row.pk for row in rows]


def original(query: np.ndarray) -> list[int]:
    """The original design: the first N rows of the table, cosine in the application."""
    rows = list(
        Entity.objects.filter(embedding_dim=DIM).values_list("id", "embedding")[:ORIGINAL_POOL]
    )
    ids = np.array([pk for pk, _ in rows])
    matrix = np.vstack([vector for _, vector in rows]).astype(np.float32)
    sims = (matrix @ query) / (np.linalg.norm(matrix, axis=1) * np.linalg.norm(query))
    return ids[np.argsort(-sims)[:K]].tolist()


def recall(found: list[int], truth: list[int]) -> float:
    return len(set(found) & set(truth)) / K


def set_ef_search(value: int | None) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "RESET hnsw.ef_search" if value is None else f"SET hnsw.ef_search = {int(value)}"
        )


def run_size(n: int, n_queries: int, exact_pg_queries: int, efs: list[int], seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    n_clusters = max(16, n // 500)
    centres = rng.standard_normal((n_clusters, DIM)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    vectors = clustered(rng, centres, n, spread=1.0)
    queries = clustered(rng, centres, n_queries, spread=1.0)
    warmup = clustered(rng, centres, n_queries, spread=1.0)
    pks, load_s, index_s = load(vectors)
    to_pk = np.array([pks[i] for i in range(n)])

    truths = [to_pk[exact_numpy(vectors, query)].tolist() for query in queries]
    methods = {
        "selector": selector,
        "original": original,
        "numpy": lambda query: to_pk[exact_numpy(vectors, query)].tolist(),
    }
    set_ef_search(None)
    # Warm the caches with other queries from the same distribution: the 100k index (~195 MB)
    # is larger than the embedded server's 128 MB shared_buffers, so steady state includes
    # reads from the OS page cache, as it would in production.
    for query in warmup:
        selector(query)
    for query in warmup[:20]:
        original(query)
        exact_numpy(vectors, query)
    lat: dict[str, list[float]] = {name: [] for name in methods}
    rec: dict[str, list[float]] = {name: [] for name in methods}
    # Blocks of queries per method, alternating in rounds: a noisy machine slows all methods
    # alike. The pause before each block lets numpy's BLAS threads, which spin ~0.1 s after a
    # call, go idle instead of competing with the database backend in the next block. The
    # machine then wakes from idle slowly: untimed calls (warm-up queries) start every block,
    # for every method. Without them the pause itself cost the selector's block 0.3 ms a
    # query at p50 (1.93 against 1.60 ms with no pause; docs/benchmarks.md, Retrieval).
    for chunk in np.array_split(np.arange(n_queries), ROUNDS):
        for name, fn in methods.items():
            time.sleep(0.5)
            for query in warmup[:WAKE_CALLS]:
                fn(query)
            for i in chunk:
                ms, found = timed(fn, queries[i])
                lat[name].append(ms)
                rec[name].append(recall(found, truths[i]))

    pg_exact: list[float] = []
    with connection.cursor() as cursor:
        cursor.execute("SET enable_indexscan = off")
    for query in queries[:exact_pg_queries]:
        ms, _ = timed(selector, query)
        pg_exact.append(ms)
    with connection.cursor() as cursor:
        cursor.execute("RESET enable_indexscan")

    p50 = {k: percentile(v, 50) for k, v in lat.items()}
    p95 = {k: percentile(v, 95) for k, v in lat.items()}
    r10 = {k: float(np.mean(v)) for k, v in rec.items()}
    lines = [
        f"### {n:,} entities ({n_clusters} clusters, {n_queries} queries, k={K})",
        "",
        f"Load (binary COPY) {load_s:.1f} s; HNSW build (m=16, ef_construction=64) {index_s:.1f} s.",
        "",
        "| method | p50 ms | p95 ms | recall@10 | p50 speed-up of the selector |",
        "|---|---|---|---|---|",
        f"| `nearest` selector (HNSW, ef_search {settings.HNSW_EF_SEARCH}) | {p50['selector']:.2f} | {p95['selector']:.2f} | {r10['selector']:.3f} | 1.00x |",
        f"| (a) original: first {ORIGINAL_POOL} rows, cosine in Python | {p50['original']:.2f} | {p95['original']:.2f} | {r10['original']:.3f} | {ratio(p50['original'], p50['selector'])} |",
        f"| (b) exact, numpy brute force (in memory) | {p50['numpy']:.2f} | {p95['numpy']:.2f} | 1.000 | {ratio(p50['numpy'], p50['selector'])} |",
        f"| exact in Postgres (index scans off, {len(pg_exact)} queries) | {percentile(pg_exact, 50):.2f} | {percentile(pg_exact, 95):.2f} | 1.000 | {ratio(percentile(pg_exact, 50), p50['selector'])} |",
        "",
    ]
    if efs:
        lines += ["| hnsw.ef_search | p50 ms | p95 ms | recall@10 |", "|---|---|---|---|"]
        for ef in efs:
            set_ef_search(ef)
            time.sleep(0.5)
            ef_lat, ef_rec = [], []
            for query, truth in zip(queries, truths, strict=True):
                ms, found = timed(selector, query)
                ef_lat.append(ms)
                ef_rec.append(recall(found, truth))
            lines.append(
                f"| {ef} | {percentile(ef_lat, 50):.2f} | {percentile(ef_lat, 95):.2f} | {np.mean(ef_rec):.3f} |"
            )
        set_ef_search(None)
        lines.append("")
    verdict = (
        f"Targets: recall@10 {r10['selector']:.3f} (>= 0.95: {'met' if r10['selector'] >= 0.95 else 'MISSED'}), "
        f"p95 {p95['selector']:.2f} ms (<= 5 ms: {'met' if p95['selector'] <= 5 else 'MISSED'}), "
        f"{ratio(p50['numpy'], p50['selector'])} faster than numpy exact at p50 "
        f"(>= 3x: {'met' if p50['numpy'] >= 3 * p50['selector'] else 'MISSED'})."
    )
    lines += [verdict, ""]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--exact-pg-queries", type=int, default=20)
    parser.add_argument("--ef", type=int, nargs="*", default=[40, 64, 100, 160])
    parser.add_argument("--seed", type=int, default=20261123)
    args = parser.parse_args()
    database = use_bench_database()
    print(f"# Retrieval benchmark (database {database}; {machine()})\n", flush=True)
    for n in args.sizes:
        lines = run_size(n, args.queries, args.exact_pg_queries, args.ef, args.seed)
        print("\n".join(lines), flush=True)


if __name__ == "__main__":
    main()
