"""The SQL of the nearest-memory search: entities and observations in one round trip, compiled
once per shape with a placeholder vector and viewer, run with the ``hnsw.ef_search`` the
search needs."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import CharField, F, FloatField, Func, QuerySet, Value
from django.db.models.functions import Cast, Coalesce

from kg.selectors.hits import KINDS, MemoryHit
from kg.selectors.visibility import visible_q
from legacymind.vectors.binding import binding_cursor
from legacymind.vectors.search import VectorQuery, nearest_queryset, placeholder

# What a hit needs, read in the search query itself: the index scan visits each row's heap
# tuple anyway, and a second query to load the hits cost ~3 ms a think at 100k entities. In
# MemoryHit's field order: a row is a hit.
_COLUMNS = (
    "kind", "id", "similarity", "name", "label", "description", "significance", "access_count",
    "last_used", "created", "source_thought_id", "source_thought__is_private",
    "source_thought__owner_id",
)  # fmt: skip
# Compiled into the SQL where the viewer's id goes, and replaced by it at each search: one
# compiled query serves every user. No user has a negative id.
_VIEWER_SLOT = -987_654_321


class EpochSeconds(Func):
    """A timestamp as seconds since the epoch (float8). Django's timestamptz loader parses text
    in Python (~86 parses a think, ~0.5 ms on 2 slow CPUs); a float loads in C."""

    template = "EXTRACT(EPOCH FROM %(expressions)s)::float8"
    output_field = FloatField()


@contextmanager
def ef_search(k: int, *, iterative: bool = False) -> Iterator[None]:
    """hnsw.ef_search for the queries inside: the index returns at most ef_search rows, so k
    neighbours need ef_search >= k (pgvector caps it at 1000). ``THINK_INJECT_EF_SEARCH`` raises
    the floor for more recall; 0 means the connection's own ``HNSW_EF_SEARCH``. When that is
    the value wanted, nothing is set (a SET LOCAL costs a transaction: three round trips).
    ``iterative`` also turns on pgvector's iterative scan (>= 0.8): the index goes on past the
    entries the query drops (a crowded index, ``_searchable``)."""
    floor = settings.THINK_INJECT_EF_SEARCH or settings.HNSW_EF_SEARCH
    ef = min(max(k, floor), 1000)
    if ef == settings.HNSW_EF_SEARCH and not iterative:  # every connection starts with it
        yield
        return
    with transaction.atomic(), connection.cursor() as cursor:
        if iterative:  # one round trip for both
            cursor.execute(
                "SELECT set_config('hnsw.ef_search', %s, true), "
                "set_config('hnsw.iterative_scan', 'relaxed_order', true)",
                [str(ef)],
            )
        else:  # pgvector 0.7 has no iterative_scan to set
            cursor.execute("SELECT set_config('hnsw.ef_search', %s, true)", [str(ef)])
        yield


UNEMBEDDED = "unembedded:"  # kind prefix of the probe's rows: KG rows without a vector


def _probe_sql(kinds: Sequence[str], limit: int) -> tuple[str, list[Any]]:
    """Up to ``limit`` ids per kind of KG rows without a vector, shaped like search rows (the
    other columns NULL, typed by the union), to ride along with the search's round trip."""
    parts = [
        f"(SELECT '{UNEMBEDDED}{kind}', id, {', '.join(['NULL'] * (len(_COLUMNS) - 2))} "
        f"FROM {KINDS[kind]._meta.db_table} WHERE embedding_dim IS NULL LIMIT %s)"
        for kind in kinds
    ]
    return " UNION ALL ".join(parts), [limit] * len(parts)


@lru_cache(maxsize=128)
def _search_sql(
    kinds: tuple[str, ...], dim: int, k: int, model: str, probe: int, scoped: bool
) -> tuple[VectorQuery, frozenset[int]]:
    """The search, compiled once per shape with a placeholder vector (and, ``scoped``, a
    placeholder viewer): building and compiling the ORM union on every search made it ~13 ms
    instead of ~7 at 100k entities; from one think to the next only the vector and the viewer
    change. ``probe`` > 0 adds up to that many ids of unembedded rows per kind (``_probe_sql``).
    Returns the query and the positions of the viewer's id among its parameters."""
    parts = []
    for kind in kinds:
        table: QuerySet[Any] = KINDS[kind].objects.filter(
            visible_q(_VIEWER_SLOT if scoped else None)
        )
        label = F("entity_type") if kind == "entity" else F("description")
        parts.append(
            nearest_queryset(table, placeholder(dim), k, model=model)
            .annotate(
                kind=Value(kind, output_field=CharField()),
                label=Cast(label, CharField()),
                last_used=EpochSeconds(Coalesce("last_accessed", "created_at")),
                created=EpochSeconds(F("created_at")),
            )
            .values_list(*_COLUMNS)
        )
    query = parts[0].union(*parts[1:], all=True) if len(parts) > 1 else parts[0]
    sql, params = query.query.sql_with_params()
    if probe > 0:
        extra, extra_params = _probe_sql(kinds, probe)
        sql, params = f"({sql}) UNION ALL {extra}", (*params, *extra_params)
    viewer = frozenset(i for i, p in enumerate(params) if p == _VIEWER_SLOT)
    if scoped and not viewer:  # the ORM changed how it passes the id: never search as nobody
        raise RuntimeError("the compiled search has no viewer parameter")
    return VectorQuery.of(sql, params, dim), viewer


def run_search(
    kinds: Sequence[str],
    vector: Sequence[float],
    k: int,
    model: str,
    probe: int,
    owner: int | None,
    *,
    iterative: bool = False,
) -> tuple[dict[str, list[MemoryHit]], dict[str, list[int]]]:
    search, slots = _search_sql(tuple(kinds), len(vector), k, model, probe, owner is not None)
    params = search.params(vector)
    for slot in slots:
        params[slot] = owner
    found: dict[str, list[MemoryHit]] = {kind: [] for kind in kinds}
    unembedded: dict[str, list[int]] = {kind: [] for kind in kinds}
    with ef_search(k, iterative=iterative), binding_cursor(connection.alias) as cursor:
        cursor.execute(search.sql, params)
        for row in cursor.fetchall():
            if row[0].startswith(UNEMBEDDED):
                unembedded[row[0].removeprefix(UNEMBEDDED)].append(row[1])
                continue
            hit = MemoryHit(*row)
            found[hit.kind].append(hit)
    for hits in found.values():
        hits.sort(key=lambda hit: -hit.similarity)
    return found, unembedded
