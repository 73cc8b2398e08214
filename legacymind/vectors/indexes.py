"""Taking a table's HNSW index out while a re-embed rewrites most of the table, and putting it
back (``rows_reembed``'s ``index`` option).

Every vector written to a table with an HNSW index is one insertion into the graph: ~1-3 ms a
row on 2 CPUs, ten times what the write costs without it, so a re-embed after a change of model
spends nearly all its time there (bench/reembed.py). Building the index afresh costs ~0.25 ms a
row. For a run that rewrites at least half of a table the index is therefore dropped first and
built again at the end. Both happen ``CONCURRENTLY``: reads and writes (new thoughts) go on
meanwhile, and searches of that table scan it exactly, slower but with the same answers. After a
change of model the old vectors answer no search anyway: searches only compare vectors of the
current model.

A run holds a session advisory lock per index while the index is out. A run that was killed
before it could rebuild leaves the index missing (or, killed during the build, invalid); the
next run (``index_repair``) finds it with no lock held, and builds it again.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import cast

from django.db import DatabaseError, connection, models
from django.db.backends.postgresql.schema import DatabaseSchemaEditor
from pgvector.django import HnswIndex

from legacymind.errors import ServiceError

INDEX_MODES = ("auto", "keep", "rebuild")

logger = logging.getLogger("legacymind.vectors.reembed")


def vector_index(model: type[models.Model], dim: int) -> models.Index | None:
    """The model's partial HNSW index for ``dim`` (``<prefix>_emb_<dim>``), if it has one."""
    for index in model._meta.indexes:
        if isinstance(index, HnswIndex) and (index.name or "").endswith(f"_emb_{dim}"):
            return index
    return None


def _valid(names: list[str]) -> dict[str, bool]:
    """Whether each of ``names`` that exists is valid (False: a concurrent build that did not
    finish); names that do not exist are absent."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, i.indisvalid FROM pg_class c "
            "JOIN pg_index i ON i.indexrelid = c.oid "
            "WHERE c.relname = ANY(%s) AND c.relnamespace = current_schema()::regnamespace",
            [names],
        )
        return dict(cursor.fetchall())


def index_state(name: str) -> str:
    """ "valid", "invalid" (a concurrent build that did not finish) or "missing"."""
    valid = _valid([name]).get(name)
    return "missing" if valid is None else "valid" if valid else "invalid"


def _expected(
    tables: list[type[models.Model]], dims: tuple[int, ...]
) -> list[tuple[type[models.Model], models.Index, int]]:
    return [
        (model, index, dim)
        for model in tables
        for dim in dims
        if (index := vector_index(model, dim)) is not None
    ]


def indexes_out(*, tables: list[type[models.Model]], dims: tuple[int, ...]) -> list[str]:
    """The HNSW indexes of ``tables`` for ``dims`` that are not there or not valid (taken out
    by a running re-embed, or left out by a killed one), in one query."""
    names = [index.name for _, index, _ in _expected(tables, dims)]
    valid = _valid(names)
    return [name for name in names if not valid.get(name)]


def _lock_key(name: str) -> int:
    digest = hashlib.blake2b(f"legacymind.vector_index.{name}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def _try_lock(name: str) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s)", [_lock_key(name)])
        return bool(cursor.fetchone()[0])


def _unlock(name: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_unlock(%s)", [_lock_key(name)])


@contextmanager
def _editor() -> Iterator[DatabaseSchemaEditor]:
    """Postgres' schema editor (its index methods take ``concurrently``), outside a transaction."""
    with connection.schema_editor(atomic=False) as editor:
        yield cast(DatabaseSchemaEditor, editor)


# What pgvector 0.8's in-memory build holds per row besides the halfvec (2 bytes a dimension + an
# 8-byte header) and the layer-0 neighbour list (2m entries of 16 bytes): the element, the upper
# layers' lists, alignment. Measured (the smallest maintenance_work_mem without pgvector's "no
# longer fits" notice): 20,000 x 384-d at m 16, 1,521 bytes a row (the formula gives 1,528);
# 10,000 x 1536-d, 3,881 (formula 3,832).
GRAPH_ROW_OVERHEAD = 240
# Postgres gives a parallel build a worker only with >= 32MB of maintenance_work_mem for each
# participant: 128MB keeps the leader and two workers.
MIN_BUILD_KB = 128 * 1024


def graph_row_bytes(*, dim: int, m: int) -> int:
    """Bytes a row takes in pgvector's in-memory HNSW build (0.8) of a halfvec index: the
    vector, the layer-0 neighbour list, GRAPH_ROW_OVERHEAD."""
    return 2 * dim + 8 + 2 * m * 16 + GRAPH_ROW_OVERHEAD


def build_memory_kb(*, rows: int, dim: int, m: int, cap_kb: int) -> int:
    """maintenance_work_mem for building an HNSW index over ``rows`` vectors: the graph with a
    fifth to spare and 16MB (Postgres counts memory in blocks of up to 8MB), at least
    MIN_BUILD_KB, at most ``cap_kb`` (the configured value).

    A parallel build allocates all of maintenance_work_mem in shared memory up front: with the
    1GB default that was ~0.5 s before the first row, whatever the table's size, a tenth of a
    20,000-row re-embed. A graph larger than the cap is built as before (pgvector
    continues on disk, slower)."""
    need = rows * graph_row_bytes(dim=dim, m=m) * 6 // 5 // 1024 + 16 * 1024
    return min(cap_kb, max(need, MIN_BUILD_KB))


def _maintenance_work_mem(value_kb: int | None = None) -> int:
    """The session's maintenance_work_mem in kB, after setting it to ``value_kb`` if given."""
    with connection.cursor() as cursor:
        if value_kb is not None:
            cursor.execute(f"SET maintenance_work_mem = '{int(value_kb)}kB'")
        cursor.execute(
            "SELECT setting::bigint FROM pg_settings WHERE name = 'maintenance_work_mem'"
        )
        return int(cursor.fetchone()[0])  # kB, the unit Postgres reports it in


@contextmanager
def _build_memory(model: type[models.Model], index: models.Index, dim: int) -> Iterator[None]:
    """The session's maintenance_work_mem sized for ``index`` while the body runs."""
    rows = model._default_manager.filter(embedding_dim=dim).count()
    cap_kb = _maintenance_work_mem()
    m = getattr(index, "m", None) or 16  # pgvector's default
    wanted = _maintenance_work_mem(build_memory_kb(rows=rows, dim=dim, m=m, cap_kb=cap_kb))
    logger.info(
        "vector_index.build index=%s rows=%d maintenance_work_mem_kb=%d", index.name, rows, wanted
    )
    try:
        yield
    finally:
        with suppress(DatabaseError):  # a lost connection takes the setting with it
            _maintenance_work_mem(cap_kb)


def _build(model: type[models.Model], index: models.Index, dim: int) -> None:
    """Build ``index`` (over the rows of dimension ``dim``) as its migration defines it,
    dropping an invalid leftover first."""
    state = index_state(index.name)
    if state == "valid":
        return
    with _build_memory(model, index, dim), _editor() as editor:
        if state == "invalid":
            editor.remove_index(model, index, concurrently=True)
        editor.add_index(model, index, concurrently=True)


def index_repair(*, tables: list[type[models.Model]], dims: tuple[int, ...]) -> list[str]:
    """Build again every HNSW index of ``tables`` that is missing or invalid and that no
    running re-embed has taken out; returns their names. Does nothing inside a transaction
    (concurrent builds cannot run there)."""
    if connection.in_atomic_block:
        return []
    out = set(indexes_out(tables=tables, dims=dims))  # nearly always none: one query
    repaired = []
    for model, index, dim in _expected(tables, dims):
        if index.name not in out or not _try_lock(index.name):
            continue
        try:
            _build(model, index, dim)
            repaired.append(index.name)
        finally:
            _unlock(index.name)
    return repaired


def rebuild_in_transaction() -> ServiceError:
    return ServiceError(
        "index=rebuild cannot run inside a transaction (indexes are dropped and built "
        "CONCURRENTLY); use index=keep there",
        fields={"index": ["not inside a transaction"]},
    )


def rebuild_wanted(*, mode: str, rows: int, table_rows: int, min_rows: int) -> bool:
    """Whether a run writing ``rows`` of a table's ``table_rows`` takes its index out (``mode``
    is one of INDEX_MODES). Half the table: an insertion costs ~5-10x a row's share of a
    build, so from there on a build is the cheaper way to the same index."""
    if mode == "rebuild":
        return rows > 0
    return mode == "auto" and rows >= min_rows and 2 * rows >= table_rows


@dataclass
class TakenOut:
    """An index a run has taken out; ``build_seconds`` is set once it is back."""

    name: str
    build_seconds: float = 0.0


@contextmanager
def index_out(
    *,
    model: type[models.Model],
    label: str,
    dim: int,
    required: bool,
    notice: Callable[[str], None],
) -> Iterator[TakenOut | None]:
    """Drop ``model``'s HNSW index for ``dim`` while the body runs and build it again after,
    whatever happens in the body, saying both through ``notice`` (``label`` names the table). Yields the index taken out,
    or None when the index stays: no index for ``dim``, inside a transaction, another run has
    it out, or the database refused the drop (a role that does not own the table, say; said
    through ``notice``). ``required`` (index=rebuild) makes the transaction and the refused
    drop errors instead."""
    index = vector_index(model, dim)
    if index is None:
        yield None
        return
    if connection.in_atomic_block:
        if required:
            raise rebuild_in_transaction()
        yield None
        return
    if not _try_lock(index.name):
        yield None
        return
    try:
        try:
            with _editor() as editor:
                editor.remove_index(model, index, concurrently=True)
        except DatabaseError as exc:
            if required:
                raise ServiceError(
                    f"could not take {index.name} out: {exc}".strip(),
                    fields={"index": ["the database refused to drop the index"]},
                ) from exc
            notice(f"{index.name}: kept in place, the database refused to drop it ({exc})".strip())
            logger.warning("reembed.index_kept index=%s error=%s", index.name, exc)
            yield None
            return
        taken = TakenOut(index.name)
        notice(f"{index.name}: taken out while {label} is rewritten")
        try:
            yield taken
        finally:
            notice(f"{index.name}: building it again")
            started = time.perf_counter()
            _build(model, index, dim)
            taken.build_seconds = time.perf_counter() - started
    finally:
        _unlock(index.name)
