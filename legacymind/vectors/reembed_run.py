"""The writing part of a re-embed run (``legacymind.vectors.reembed.rows_reembed`` plans it):
the tables one after another, batch by batch, the model embedding the next batch while the
current one is written."""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.db import connection, models, transaction
from django.utils import timezone

from legacymind.providers.embeddings import EmbeddingError, EmbeddingProvider
from legacymind.vectors.indexes import index_out
from legacymind.vectors.reembed_plan import (
    EmbeddedTable,
    Interrupted,
    Notice,
    Progress,
    ReembedSummary,
    Stop,
)
from legacymind.vectors.writes import RowGuard, text_digest, vectors_store


@dataclass
class Run:
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
            Feed(
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

    def _table_write(self, table: EmbeddedTable, feed: Feed, following: Feed | None) -> None:
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
                written = batch_write(
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


class Feed:
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


def batch_write(
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
