"""Re-embedding benchmark: rows/s of ``rows_reembed`` (what ``manage.py reembed`` runs) against
the raw throughput of the embedder alone on the same texts, in the same batches, in the same
run, for the ``hash`` and ``local`` (all-MiniLM-L6-v2) providers.

    python bench/reembed.py [--hash-rows 20000] [--local-rows 3000] [--batch-size 256] [--repeat 3]

It runs in its own database (see bench/_common.py: ``bench_legacymind``, never the dev data),
fills it with thoughts (15-30 words), entities and observations in the ratio 2:1:1, and times
full passes (``all_rows``) with the partial HNSW indexes in place, as in production. The raw
and the reembed passes alternate and the median of ``--repeat`` pairs is reported; tables are
vacuumed before each reembed pass so earlier passes' dead rows do not count against it.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _common import hnsw_indexes_drop, indexes_create, machine, median, use_bench_database
from django.conf import settings
from django.contrib.auth.models import User
from django.db import connection

from kg.models import Entity, Observation
from legacymind.providers import embeddings
from legacymind.reembed import rows_reembed
from thoughts.models import Thought

# fmt: off
WORDS = [
    "memory", "graph", "thought", "journal", "postgres", "index", "vector", "model", "question",
    "answer", "reason", "chain", "session", "agent", "entity", "observation", "moderator",
    "extract", "summary", "crux", "belief", "doubt", "evidence", "plan", "debug", "idea",
    "photo", "light", "lens", "morning", "evening", "river", "city", "friend", "work", "project",
    "deadline", "budget", "invoice", "server", "deploy", "release", "test", "failure", "retry",
    "backoff", "queue", "worker", "cache", "redis", "design", "review", "note", "draft",
    "insight", "pattern", "habit", "sleep", "walk", "coffee", "book", "chapter", "lesson",
    "teacher", "student", "family", "garden", "winter", "summer", "travel", "train", "station",
    "letter", "promise", "risk",
]
# fmt: on
TABLES = ("thoughts_thought", "kg_entity", "kg_observation")


def fill(rows: int, seed: int) -> list[str]:
    """Replace the bench rows with ``rows`` new ones; return their texts in reembed's order."""
    rng = np.random.default_rng(seed)

    def phrase(low: int, high: int) -> str:
        return " ".join(rng.choice(WORDS, size=int(rng.integers(low, high))))

    with connection.cursor() as cursor:
        cursor.execute(f"TRUNCATE {', '.join(TABLES)} RESTART IDENTITY CASCADE")
    owner, _ = User.objects.get_or_create(username="bench")
    n_thoughts, n_entities = rows // 2, rows // 4
    n_observations = rows - n_thoughts - n_entities
    Thought.objects.bulk_create(
        (Thought(owner=owner, content=phrase(15, 31)) for _ in range(n_thoughts)), batch_size=2000
    )
    Entity.objects.bulk_create(
        (
            Entity(name=f"{phrase(1, 4)} {i}", entity_type=str(rng.choice(["concept", "person"])))
            for i in range(n_entities)
        ),
        batch_size=2000,
    )
    Observation.objects.bulk_create(
        (
            Observation(name=f"{phrase(1, 3)} {i}", description=phrase(4, 12))
            for i in range(n_observations)
        ),
        batch_size=2000,
    )
    texts = [t.content for t in Thought.objects.order_by("pk").only("content")]
    texts += [e.embedding_text() for e in Entity.objects.order_by("pk").only("name", "entity_type")]
    texts += [
        o.embedding_text() for o in Observation.objects.order_by("pk").only("name", "description")
    ]
    return texts


def raw_pass(provider: embeddings.EmbeddingProvider, texts: list[str], batch_size: int) -> float:
    started = time.perf_counter()
    for i in range(0, len(texts), batch_size):
        provider.embed(texts[i : i + batch_size])
    return len(texts) / (time.perf_counter() - started)


def reembed_pass(batch_size: int, rows: int) -> float:
    with connection.cursor() as cursor:
        cursor.execute(f"VACUUM {', '.join(TABLES)}")
    summary = rows_reembed(target="all", batch_size=batch_size, all_rows=True)
    assert summary.rows == rows, (summary.rows, rows)
    return summary.rows_per_second


def without_vector_indexes(batch_size: int, rows: int) -> float:
    """One reembed pass with the partial HNSW indexes dropped (restored afterwards): how much of
    the time is the index maintenance each written vector costs."""
    definitions = hnsw_indexes_drop(TABLES)
    try:
        return reembed_pass(batch_size, rows)
    finally:
        indexes_create(definitions)


def measure(
    name: str, rows: int, batch_size: int, repeat: int, seed: int
) -> tuple[int, list[float], list[float]]:
    """Rows, then raw and reembed rows/s of each pass."""
    settings.EMBEDDING_PROVIDER = name
    settings.EMBEDDING_DIM = 0
    embeddings._cached.cache_clear()
    provider = embeddings.get_provider()
    texts = fill(rows, seed)
    provider.embed(texts[:batch_size])  # load the model, warm the caches
    rows_reembed(target="all", batch_size=batch_size)  # first pass: rows had no vector yet
    raw, ours = [], []
    for _ in range(repeat):
        raw.append(raw_pass(provider, texts, batch_size))
        ours.append(reembed_pass(batch_size, len(texts)))
    return len(texts), raw, ours


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hash-rows", type=int, default=20_000)
    parser.add_argument("--local-rows", type=int, default=3_000)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=20261123)
    args = parser.parse_args()
    database = use_bench_database()
    print(f"# Re-embedding benchmark (database {database}; {machine()})\n")
    print(f"Batch size {args.batch_size}; median of {args.repeat} alternating pairs of passes.\n")
    print("| provider | rows | raw embedder rows/s | reembed rows/s | ratio | target |")
    print("|---|---|---|---|---|---|")
    passes: list[str] = []
    for name, rows in (("hash", args.hash_rows), ("local", args.local_rows)):
        if rows <= 0:
            continue
        count, raw_passes, our_passes = measure(name, rows, args.batch_size, args.repeat, args.seed)
        raw, ours = median(raw_passes), median(our_passes)
        if name == "hash":
            target = f">= 5,000 rows/s: {'met' if ours >= 5000 else 'MISSED'}"
        else:
            target = f">= 0.90x: {'met' if ours >= 0.9 * raw else 'MISSED'}"
        print(
            f"| {name} | {count:,} | {raw:,.0f} | {ours:,.0f} | {ours / raw:.2f}x | {target} |",
            flush=True,
        )
        passes.append(
            f"{name}: raw {[round(x) for x in raw_passes]}, reembed {[round(x) for x in our_passes]}"
        )
        if name == "hash":
            bare = without_vector_indexes(args.batch_size, count)
            print(
                f"| hash, HNSW indexes dropped (for reference) | {count:,} | {raw:,.0f} | "
                f"{bare:,.0f} | {bare / raw:.2f}x | index maintenance is the rest |",
                flush=True,
            )
    print("\nEvery pass (rows/s): " + "; ".join(passes) + ".")


if __name__ == "__main__":
    main()
