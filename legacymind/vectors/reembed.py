"""Re-embedding stored rows with the current provider: ``manage.py reembed`` and the
``legacymind.rows_reembed`` task both call :func:`rows_reembed`.

By default only rows whose provider, model or dimension differ from the current provider, or
that have no vector, are embedded; ``all_rows`` redoes every row. Each batch is written in its
own transaction, so an interrupted run keeps every finished batch and the next run picks up the
rest. A batch's UPDATE writes only the rows that still need a vector and whose text is still
the one embedded (checked on each row's latest version): a concurrent edit is never
overwritten by a vector of its old text, and a row another run has just written is not
written twice.

A run that rewrites most of a table takes the table's HNSW index out and builds it again at the
end (``index``, see ``legacymind.vectors.indexes``); every run first rebuilds an index that a
killed run left out.
"""

from __future__ import annotations

from django.conf import settings
from django.db import connection, models

from legacymind.errors import ServiceError
from legacymind.providers.embeddings import EmbeddingProvider, get_provider
from legacymind.vectors.indexes import (
    INDEX_MODES,
    index_repair,
    rebuild_in_transaction,
    rebuild_wanted,
)
from legacymind.vectors.reembed_plan import (
    EmbeddedTable,
    Interrupted,
    Notice,
    Progress,
    ReembedSummary,
    Stop,
    TableSummary,
    embedded_models,
    embedded_tables,
)
from legacymind.vectors.reembed_run import Run
from legacymind.vectors.search import indexed_dims

# The run's types live in reembed_plan and its writing in reembed_run; callers reach all of it
# here.
__all__ = [
    "DEFAULT_BATCH_SIZE",
    "MAX_BATCH_SIZE",
    "TARGETS",
    "EmbeddedTable",
    "Interrupted",
    "Notice",
    "Progress",
    "ReembedSummary",
    "Stop",
    "TableSummary",
    "embedded_models",
    "embedded_tables",
    "rows_reembed",
    "stale_rows",
]

TARGETS = ("thoughts", "kg", "all")
MAX_BATCH_SIZE = 2048
# A batch costs a fixed ~5 ms of statements and round trips besides its rows (temp table, COPY,
# ANALYZE, UPDATE, commit, the next read): the write phase of a 20,000-row re-embed took 0.97-1.04 s
# in batches of 256 and 0.77-0.80 s in batches of 1,024 or 2,048 (bench/reembed.py's data,
# the builds timed apart). 1,024 also stays well inside one OpenAI request (2,048 inputs).
DEFAULT_BATCH_SIZE = 1024


def stale_rows(provider: EmbeddingProvider) -> models.Q:
    """Rows without a vector, or with one from another provider, model or dimension."""
    current = models.Q(
        embedding_provider=provider.name, embedding_model=provider.model, embedding_dim=provider.dim
    )
    return models.Q(embedding__isnull=True) | ~current


def _validate(*, target: str, batch_size: int, limit: int | None, index: str) -> None:
    if index not in INDEX_MODES:
        raise ServiceError(
            f"index must be one of {', '.join(INDEX_MODES)}, not {index!r}",
            fields={"index": [f"one of {', '.join(INDEX_MODES)}"]},
        )
    if target not in TARGETS:
        raise ServiceError(
            f"target must be one of {', '.join(TARGETS)}, not {target!r}",
            fields={"target": [f"one of {', '.join(TARGETS)}"]},
        )
    if not 1 <= batch_size <= MAX_BATCH_SIZE:
        raise ServiceError(
            f"batch_size must be between 1 and {MAX_BATCH_SIZE}, not {batch_size}",
            fields={"batch_size": [f"1..{MAX_BATCH_SIZE}"]},
        )
    if limit is not None and limit < 1:
        raise ServiceError(
            f"limit must be at least 1 (or omitted for no limit), not {limit}",
            fields={"limit": ["at least 1"]},
        )


def rows_reembed(
    *,
    target: str = "all",
    batch_size: int = DEFAULT_BATCH_SIZE,
    limit: int | None = None,
    all_rows: bool = False,
    dry_run: bool = False,
    index: str = "auto",
    progress: Progress | None = None,
    notice: Notice | None = None,
    stop: Stop | None = None,
) -> ReembedSummary:
    """Embed the rows of ``target`` with the current provider, ``batch_size`` rows at a time,
    at most ``limit`` rows in all. ``dry_run`` counts and writes nothing.

    ``index``: "auto" takes a table's HNSW index out while the run writes at least
    ``REEMBED_INDEX_REBUILD_MIN_ROWS`` rows and half the table, and builds it again after;
    "rebuild" always does, "keep" never (every vector is then an index insertion).

    ``stop`` ends the run at the next batch boundary (``summary.stopped``); an index taken
    out is built again first."""
    _validate(target=target, batch_size=batch_size, limit=limit, index=index)
    say: Notice = notice or (lambda line: None)
    if index == "rebuild" and not dry_run and connection.in_atomic_block:
        # Checked before the first table: a later table failing would leave earlier ones written.
        raise rebuild_in_transaction()
    provider = get_provider()
    summary = ReembedSummary(
        target=target,
        provider=provider.name,
        model=provider.model,
        dim=provider.dim,
        all_rows=all_rows,
        dry_run=dry_run,
        index=index,
    )
    wanted = models.Q() if all_rows else stale_rows(provider)
    tables = embedded_tables(target)
    if not dry_run:
        _indexes_repair(summary, say)
    _tables_plan(summary, tables, wanted=wanted, limit=limit, index=index)
    if dry_run:
        return summary
    run = Run(
        summary=summary,
        provider=provider,
        wanted=wanted,
        say=say,
        progress=progress,
        stop=stop or (lambda: False),
    )
    run.tables_write(tables, batch_size=batch_size)
    return summary


def _indexes_repair(summary: ReembedSummary, say: Notice) -> None:
    # Every embedded table, whatever the target: a killed run may have been on another.
    summary.repaired = index_repair(tables=embedded_models(), dims=indexed_dims())
    for name in summary.repaired:
        say(f"{name}: built again (an earlier run was stopped before it could)")


def _tables_plan(
    summary: ReembedSummary,
    tables: list[EmbeddedTable],
    *,
    wanted: models.Q,
    limit: int | None,
    index: str,
) -> None:
    """Count each table's pending rows, take on as many as ``limit`` leaves, and decide whether
    its index comes out while the run writes."""
    budget = limit
    for table in tables:
        manager = table.model._default_manager
        pending = manager.filter(wanted).count()
        selected = pending if budget is None else min(pending, budget)
        summary.tables[table.label] = TableSummary(
            pending=pending,
            selected=selected,
            rebuild=rebuild_wanted(
                mode=index,
                rows=selected,
                table_rows=manager.count() if index == "auto" else 0,
                min_rows=settings.REEMBED_INDEX_REBUILD_MIN_ROWS,
            ),
        )
        if budget is not None:
            budget -= selected
