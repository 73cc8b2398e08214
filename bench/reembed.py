"""Re-embedding benchmark: rows/s of ``rows_reembed`` (what ``manage.py reembed`` runs) against
the raw throughput of the embedder alone on the same texts, in the same batches, in the same
run, for the ``hash`` and ``local`` (all-MiniLM-L6-v2) providers.

    python bench/reembed.py [--hash-rows 20000] [--local-rows 3000] [--batch-size 1024] [--repeat 3]

It runs in its own database (see bench/_common.py: ``bench_legacymind``, never the dev data),
fills it with thoughts (15-30 words), entities and observations in the ratio 2:1:1, and times
what ``manage.py reembed`` does after a change of model, with the partial HNSW indexes in place
as in production: before each timed pass every row is given another model's vector of the same
dimension (set up untimed, with the indexes dropped and rebuilt), so the pass rewrites every
row with a vector that differs from the stored one. The raw and the reembed passes alternate
and the median of ``--repeat`` pairs is reported; tables are vacuumed before each reembed pass.

With the default ``--index auto`` a pass that rewrites a table takes its HNSW index out and
builds it again at the end (legacymind/vector_indexes.py); the build is part of the time. For
the hash provider two more passes follow: the model change with ``--index keep`` (every vector
an insertion into the index in place: the baseline), and ``--all`` over vectors that are
already the provider's own.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _common import hnsw_indexes_drop, indexes_create, machine, median, use_bench_database
from django.conf import settings
from django.contrib.auth.models import User
from django.db import connection, transaction
from django.utils import timezone

from kg.models import Entity, Observation
from legacymind.providers import embeddings
from legacymind.vectors.reembed import (
    DEFAULT_BATCH_SIZE,
    ReembedSummary,
    embedded_tables,
    rows_reembed,
)
from legacymind.vectors.writes import vectors_store
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
PREVIOUS_MODEL = "previous-model"  # what the rows hold before each timed pass


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
    return [
        table.text(*values)
        for table in embedded_tables("all")
        for values in table.model._default_manager.order_by("pk").values_list(*table.columns)
    ]


def raw_pass(provider: embeddings.EmbeddingProvider, texts: list[str], batch_size: int) -> float:
    started = time.perf_counter()
    for i in range(0, len(texts), batch_size):
        provider.embed(texts[i : i + batch_size])
    return len(texts) / (time.perf_counter() - started)


def previous_model(provider: embeddings.EmbeddingProvider) -> None:
    """Give every row another model's vector of the provider's dimension: the feature-hash
    vector of its text with a word added (related to the new one, never equal), recorded as
    ``PREVIOUS_MODEL``. Untimed set-up, written with the HNSW indexes dropped and rebuilt."""
    old = embeddings.HashEmbedder(provider.dim)
    now = timezone.now()
    definitions = hnsw_indexes_drop(TABLES)
    try:
        for table in embedded_tables("all"):  # what reembed reads, embedded otherwise
            manager = table.model._default_manager
            rows = list(manager.order_by("pk").values_list("pk", *table.columns))
            for i in range(0, len(rows), 2000):
                chunk = rows[i : i + 2000]
                with transaction.atomic():
                    vectors_store(
                        model=table.model,
                        pks=[row[0] for row in chunk],
                        matrix=old.embed([f"{table.text(*row[1:])} previously" for row in chunk]),
                        provider="previous",
                        model_name=PREVIOUS_MODEL,
                        embedded_at=now,
                    )
    finally:
        indexes_create(definitions)


def reembed_pass(
    batch_size: int, rows: int, *, all_rows: bool, index: str = "auto"
) -> ReembedSummary:
    with connection.cursor() as cursor:
        cursor.execute(f"VACUUM ANALYZE {', '.join(TABLES)}")
    summary = rows_reembed(target="all", batch_size=batch_size, all_rows=all_rows, index=index)
    assert summary.rows == rows, (summary.rows, rows)
    return summary


def model_change_pass(
    provider: embeddings.EmbeddingProvider, batch_size: int, rows: int, index: str = "auto"
) -> ReembedSummary:
    """``manage.py reembed`` (only the rows another model embedded: here, all of them)."""
    previous_model(provider)
    return reembed_pass(batch_size, rows, all_rows=False, index=index)


def index_note(summary: ReembedSummary) -> str:
    """Which indexes the pass took out and how long building them again took."""
    built = [t for t in summary.tables.values() if t.index_rebuilt]
    if not built:
        return "every vector an index insertion"
    seconds = sum(t.index_seconds for t in built)
    return (
        f"{len(built)} HNSW index(es) taken out and built again: {seconds:.1f} s of "
        f"{summary.seconds:.1f} s"
    )


def measure(
    name: str, rows: int, batch_size: int, repeat: int, seed: int
) -> tuple[int, list[float], list[ReembedSummary], embeddings.EmbeddingProvider]:
    """Rows, then raw rows/s and the reembed summary of each pass, and the provider."""
    settings.EMBEDDING_PROVIDER = name
    settings.EMBEDDING_DIM = 0
    embeddings._cached.cache_clear()
    provider = embeddings.get_provider()
    texts = fill(rows, seed)
    provider.embed(texts[:batch_size])  # load the model, warm the caches
    raw, ours = [], []
    for _ in range(repeat):
        raw.append(raw_pass(provider, texts, batch_size))
        ours.append(model_change_pass(provider, batch_size, len(texts)))
    return len(texts), raw, ours, provider


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hash-rows", type=int, default=20_000)
    parser.add_argument("--local-rows", type=int, default=3_000)
    parser.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=20261123)
    args = parser.parse_args()
    database = use_bench_database()
    print(f"# Re-embedding benchmark (database {database}; {machine()})\n")
    print(f"Batch size {args.batch_size}; median of {args.repeat} alternating pairs of passes.\n")
    print("| provider | rows | raw embedder rows/s | reembed rows/s | ratio | target | index |")
    print("|---|---|---|---|---|---|---|")
    passes: list[str] = []
    for name, rows in (("hash", args.hash_rows), ("local", args.local_rows)):
        if rows <= 0:
            continue
        count, raw_passes, summaries, provider = measure(
            name, rows, args.batch_size, args.repeat, args.seed
        )
        our_passes = [summary.rows_per_second for summary in summaries]
        raw, ours = median(raw_passes), median(our_passes)
        if name == "hash":
            target = f">= 5,000 rows/s: {'met' if ours >= 5000 else 'MISSED'}"
        else:
            target = f">= 0.90x: {'met' if ours >= 0.9 * raw else 'MISSED'}"
        middle = summaries[our_passes.index(ours)] if ours in our_passes else summaries[0]
        print(
            f"| {name}, model change | {count:,} | {raw:,.0f} | {ours:,.0f} | {ours / raw:.2f}x "
            f"| {target} | {index_note(middle)} |",
            flush=True,
        )
        passes.append(
            f"{name}: raw {[round(x) for x in raw_passes]}, reembed {[round(x) for x in our_passes]}"
        )
        kept = model_change_pass(provider, args.batch_size, count, index="keep")
        print(
            f"| {name}, model change, `--index keep` (baseline: the index kept in place) | "
            f"{count:,} | {raw:,.0f} | {kept.rows_per_second:,.0f} | "
            f"{kept.rows_per_second / raw:.2f}x | ours is {ours / kept.rows_per_second:.1f}x "
            f"this | {index_note(kept)} |",
            flush=True,
        )
        if name == "hash":
            same = reembed_pass(args.batch_size, count, all_rows=True)
            print(
                f"| hash, `--all` over unchanged vectors | {count:,} | {raw:,.0f} | "
                f"{same.rows_per_second:,.0f} | {same.rows_per_second / raw:.2f}x | not a model "
                f"change | {index_note(same)} |",
                flush=True,
            )
    print("\nEvery pass (rows/s): " + "; ".join(passes) + ".")


if __name__ == "__main__":
    main()
