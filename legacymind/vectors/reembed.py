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

import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from django.apps import apps
from django.conf import settings
from django.db import connection, models, transaction
from django.utils import timezone

from legacymind.errors import ServiceError
from legacymind.providers.embeddings import EmbeddingError, EmbeddingProvider, get_provider
from legacymind.vectors.indexes import (
    INDEX_MODES,
    index_out,
    index_repair,
    rebuild_in_transaction,
    rebuild_wanted,
)
from legacymind.vectors.search import EmbeddedModel, indexed_dims
from legacymind.vectors.writes import RowGuard, text_digest, vectors_store

TARGETS = ("thoughts", "kg", "all")
MAX_BATCH_SIZE = 2048
# A batch costs a fixed ~5 ms of statements and round trips besides its rows (temp table, COPY,
# ANALYZE, UPDATE, commit, the next read): the write phase of a 20,000-row re-embed took 0.97-1.04 s
# in batches of 256 and 0.77-0.80 s in batches of 1,024 or 2,048 (bench/reembed.py's data,
# the builds timed apart). 1,024 also stays well inside one OpenAI request (2,048 inputs).
DEFAULT_BATCH_SIZE = 1024

Progress = Callable[[int, int], None]
"""Called with (rows done, rows this run will do): once before the first batch, then after
every batch."""
Notice = Callable[[str], None]
"""Called with a line for the operator: an index taken out or being built again."""
Stop = Callable[[], bool]
"""Asked before each table and after every batch: True ends the run there (a background job
cancelled). The batches written so far stay, as after Ctrl-C."""


@dataclass(frozen=True)
class EmbeddedTable:
    label: str
    model: type[models.Model]
    columns: tuple[str, ...]  # what the text needs: nothing else is read
    text: Callable[..., str]  # the text, from the values of ``columns`` in that order


def embedded_tables(target: str) -> list[EmbeddedTable]:
    """The tables that hold vectors (``target``: thoughts, kg or all), each with what its rows
    embed as."""
    return [
        EmbeddedTable(m.reembed_label, m, m.reembed_columns, m.reembed_text)
        for m in apps.get_models()
        if issubclass(m, EmbeddedModel) and target in ("all", m.reembed_target)
    ]


def embedded_models() -> list[type[models.Model]]:
    return [table.model for table in embedded_tables("all")]


@dataclass
class TableSummary:
    pending: int  # rows needing an embedding when the run started (all rows with all_rows)
    selected: int  # of those, the rows this run takes on (after limit)
    embedded: int = 0
    rebuild: bool = False  # whether the run takes the table's HNSW index out
    index_rebuilt: str | None = None  # the index it took out and built again
    index_seconds: float = 0.0  # building it again


@dataclass
class ReembedSummary:
    target: str
    provider: str
    model: str
    dim: int
    all_rows: bool
    dry_run: bool
    index: str = "auto"
    tables: dict[str, TableSummary] = field(default_factory=dict)
    repaired: list[str] = field(default_factory=list)  # indexes a killed run had left out
    seconds: float = 0.0
    stopped: bool = False  # ended early because ``stop`` said so

    @property
    def rows(self) -> int:
        return sum(t.embedded for t in self.tables.values())

    @property
    def remaining(self) -> int:
        return sum(t.pending - t.embedded for t in self.tables.values())

    @property
    def rows_per_second(self) -> float:
        return self.rows / self.seconds if self.seconds > 0 else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "rows": self.rows,
            "remaining": self.remaining,
            "rows_per_second": round(self.rows_per_second, 1),
        }


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during a run, with what the run had done by then (every finished batch is kept,
    and an index taken out has been built again unless a second Ctrl-C stopped that too)."""

    def __init__(self, summary: ReembedSummary) -> None:
        super().__init__()
        self.summary = summary


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
    run = _Run(
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


@dataclass
class _Run:
    """The writing part of a run: the tables one after another, batch by batch, with the
    counts and the progress reported as it goes."""

    summary: ReembedSummary
    provider: EmbeddingProvider
    wanted: models.Q
    say: Notice
    progress: Progress | None
    stop: Stop
    total: int = 0
    done: int = 0
    started: float = 0.0

    def tables_write(self, tables: list[EmbeddedTable], *, batch_size: int) -> None:
        self.total = sum(t.selected for t in self.summary.tables.values())
        if self.progress:
            self.progress(0, self.total)
        self.started = time.perf_counter()
        # One worker embeds the next batch while this thread writes the current one: the write
        # (mostly HNSW index maintenance, in the database process) and the model then overlap.
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="reembed")
        feeds = [
            _Feed(
                table=table,
                provider=self.provider,
                wanted=self.wanted,
                quota=self.summary.tables[table.label].selected,
                size=batch_size,
                pool=pool,
            )
            for table in tables
        ]
        try:
            if not self._stopping():
                feeds[0].start()
            for number, (table, feed) in enumerate(zip(tables, feeds, strict=True)):
                if self.summary.stopped:
                    break
                following = feeds[number + 1] if number + 1 < len(feeds) else None
                self._table_write(table, feed, following)
        except KeyboardInterrupt as exc:
            # Raised again with the counts so far: the command reports them, not a traceback.
            self.summary.seconds = time.perf_counter() - self.started
            raise Interrupted(self.summary) from exc
        except EmbeddingError as exc:
            raise EmbeddingError(
                f"{exc.detail} ({self.done} rows were re-embedded before this; run again to resume)"
            ) from exc
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        self.summary.seconds = time.perf_counter() - self.started

    def _stopping(self) -> bool:
        if not self.summary.stopped and self.stop():
            self.summary.stopped = True
        return self.summary.stopped

    def _table_write(self, table: EmbeddedTable, feed: _Feed, following: _Feed | None) -> None:
        """Write the table's batches, its index out meanwhile when the plan says so."""
        counts = self.summary.tables[table.label]
        out = (
            index_out(
                model=table.model,
                label=table.label,
                dim=self.provider.dim,
                required=self.summary.index == "rebuild",
                notice=self.say,
            )
            if counts.rebuild
            else nullcontext(None)
        )
        with out as taken:
            for rows, vectors in feed.batches():
                written = _batch_write(
                    table=table,
                    provider=self.provider,
                    wanted=self.wanted,
                    rows=rows,
                    vectors=vectors,
                )
                counts.embedded += written
                self.done += written
                self.summary.seconds = time.perf_counter() - self.started
                if self.progress:
                    self.progress(self.done, self.total)
                if self._stopping():
                    break
            if following is not None and not self.summary.stopped:
                # Started before this table's index is built again (when the block closes):
                # the model embeds the next table's first batch meanwhile.
                following.start()
        if taken:  # back once the block has closed
            counts.index_rebuilt, counts.index_seconds = taken.name, taken.build_seconds


class _Feed:
    """A table's rows to embed, in primary-key order (keyset, so a batch never rescans rows
    already done or skipped), each batch handed to the pool's one worker as soon as it is read:
    the model embeds the next batch while this thread writes the current one (a write and its
    database work overlap the model). ``start`` reads and sends the first batch; the run calls it
    for the next table before the current table's index is built again."""

    def __init__(
        self,
        *,
        table: EmbeddedTable,
        provider: EmbeddingProvider,
        wanted: models.Q,
        quota: int,
        size: int,
        pool: ThreadPoolExecutor,
    ) -> None:
        self.table, self.provider, self.pool = table, provider, pool
        self.quota, self.size = quota, size
        # Tuples of (pk, *columns), not model instances: building 20,000 of those was ~5% of
        # a re-embed with the hash embedder.
        self.query = (
            table.model._default_manager.filter(wanted)
            .order_by("pk")
            .values_list("pk", *table.columns)
        )
        self.next: tuple[list[tuple[Any, ...]], Future[np.ndarray]] | None = None

    def _send(self, after: Any) -> None:
        """Read the batch after primary key ``after`` (None: the first) and send it to the
        model; ``next`` is None once the quota is spent or the rows have run out."""
        count = min(self.size, self.quota)
        batch = self.query if after is None else self.query.filter(pk__gt=after)
        rows = list(batch[:count]) if count > 0 else []
        self.quota -= len(rows)
        texts = [self.table.text(*row[1:]) for row in rows]
        self.next = (rows, self.pool.submit(self.provider.embed, texts)) if rows else None

    def start(self) -> None:
        self._send(None)

    def batches(self) -> Iterator[tuple[list[tuple[Any, ...]], np.ndarray]]:
        """Each batch's rows and vectors; the batch after it is on its way meanwhile."""
        while self.next is not None:
            rows, vectors = self.next
            self._send(rows[-1][0])
            yield rows, vectors.result()


def _batch_write(
    *,
    table: EmbeddedTable,
    provider: EmbeddingProvider,
    wanted: models.Q,
    rows: list[tuple[Any, ...]],
    vectors: np.ndarray,
) -> int:
    """Store the batch's vectors in one statement, for the rows that still need them
    (``wanted``) and whose text is still what was embedded: the UPDATE checks both, on each
    row's latest version, so a concurrent edit or run is never overwritten and nothing is
    locked before the write. The rest stay pending for a later run."""
    guard = RowGuard(
        columns=table.columns,
        digests=[text_digest(row[1:]) for row in rows],
        wanted=wanted,
    )
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        if outermost:
            # The batch's commit does not wait for its WAL to reach the disk (~2.5 ms an
            # fsync here, for each of a run's batches). A crash can lose only the last
            # batches committed, never corrupt anything: their rows are still stale, and the
            # next run embeds them again. Only this transaction: the session keeps its setting.
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL synchronous_commit = off")
        # updated_at is left alone on purpose: the row's content did not change.
        return vectors_store(
            model=table.model,
            pks=[row[0] for row in rows],
            matrix=vectors,
            provider=provider.name,
            model_name=provider.model,
            embedded_at=timezone.now(),
            guard=guard,
        )
