"""One search of the KG's HNSW indexes for injection and verification (``memories``): the
nearest entities and observations of a query vector, in one round trip, with the SQL compiled
once; what a crowded index left out (``_searchable``) searched again.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import CharField, F, FloatField, Func, QuerySet, Value
from django.db.models.functions import Cast, Coalesce

from kg.models import Entity, Observation
from legacymind.vectors import (
    VectorQuery,
    binding_cursor,
    nearest_queryset,
    pgvector_version,
    placeholder,
)

logger = logging.getLogger("thoughts.think")

KINDS: dict[str, type[Entity] | type[Observation]] = {"entity": Entity, "observation": Observation}
# What a candidate needs, read in the search query itself: the index scan visits each row's
# heap tuple anyway, and a second query to load the hits cost ~3 ms a think at 100k entities.
_COLUMNS = (
    "kind", "id", "similarity", "name", "label", "description", "significance", "access_count",
    "last_used", "source_thought_id", "source_thought__is_private", "source_thought__owner_id",
)  # fmt: skip


class EpochSeconds(Func):
    """A timestamp as seconds since the epoch (float8). Django's timestamptz loader parses text
    in Python (~86 parses a think, ~0.5 ms on 2 slow CPUs); a float loads in C."""

    template = "EXTRACT(EPOCH FROM %(expressions)s)::float8"
    output_field = FloatField()


@contextmanager
def ef_search(k: int, *, iterative: bool = False) -> Iterator[None]:
    """hnsw.ef_search for the queries inside: the index returns at most ef_search rows, so k
    neighbours need ef_search >= k (pgvector caps it at 1000). ``SURR_INJECT_EF_SEARCH`` raises
    the floor for more recall; 0 means the connection's own ``HNSW_EF_SEARCH``. When that is
    the value wanted, nothing is set (a SET LOCAL costs a transaction: three round trips).
    ``iterative`` also turns on pgvector's iterative scan (>= 0.8): the index goes on past the
    entries the query drops (a crowded index, ``_searchable``)."""
    floor = settings.SURR_INJECT_EF_SEARCH or settings.HNSW_EF_SEARCH
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


@dataclass(frozen=True)
class Hit:
    kind: str
    id: int
    similarity: float
    name: str
    label: str
    description: str
    significance: float
    access_count: int
    last_used: float  # epoch seconds of the last use, or of the creation when never used
    source_thought_id: Any
    source_private: bool | None
    source_owner_id: int | None

    def visible_to(self, owner_id: int | None) -> bool:
        """A memory from a private thought is its owner's alone (``memories_visible_to``)."""
        return self.source_thought_id is None or not (
            self.source_private and self.source_owner_id != owner_id
        )


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


@lru_cache(maxsize=64)
def _search_sql(kinds: tuple[str, ...], dim: int, k: int, model: str, probe: int) -> VectorQuery:
    """The search, compiled once per (kinds, dimension, k, model, probe) with a placeholder
    vector. Building and compiling the ORM union on every search made it ~13 ms instead of ~7
    at 100k entities; from one think to the next only the vector changes. ``probe`` > 0 adds up
    to that many ids of unembedded rows per kind (``_probe_sql``)."""
    parts = []
    for kind in kinds:
        table: QuerySet[Any] = KINDS[kind].objects.all()
        label = F("entity_type") if kind == "entity" else F("description")
        parts.append(
            nearest_queryset(table, placeholder(dim), k, model=model)
            .annotate(
                kind=Value(kind, output_field=CharField()),
                label=Cast(label, CharField()),
                last_used=EpochSeconds(Coalesce("last_accessed", "created_at")),
            )
            .values_list(*_COLUMNS)
        )
    query = parts[0].union(*parts[1:], all=True) if len(parts) > 1 else parts[0]
    sql, params = query.query.sql_with_params()
    if probe > 0:
        extra, extra_params = _probe_sql(kinds, probe)
        sql, params = f"({sql}) UNION ALL {extra}", (*params, *extra_params)
    return VectorQuery.of(sql, params, dim)


def search(
    kinds: Sequence[str], vector: Sequence[float], k: int, model: str, probe: int = 0
) -> tuple[dict[str, list[Hit]], dict[str, list[int]], dict[str, int]]:
    """The k nearest rows of each kind, most similar first; how many rows of each kind the
    search could have returned, up to k; and (``probe`` > 0) the ids of up to ``probe`` rows of
    each kind without a vector, in one round trip while the index answers in full."""
    found, unembedded = _run_search(kinds, vector, k, model, probe)
    live = {kind: k for kind in kinds}
    short = [kind for kind in kinds if len(found[kind]) < k]
    now = time.monotonic()
    empty = [kind for kind in short if _NONE_SEARCHABLE.get((kind, len(vector), model), 0) > now]
    live.update(dict.fromkeys(empty, 0))
    ask = [kind for kind in short if kind not in empty]
    if ask:
        live.update(_searchable(ask, len(vector), model, k))
        crowded = [kind for kind in short if len(found[kind]) < live[kind]]
        if crowded:
            logger.info(
                "think.search_crowded kinds=%s k=%d returned=%s searchable=%s (the index holds "
                "entries this search cannot use: dead rows before a VACUUM, or vectors of "
                "another model before reembed)",
                ",".join(crowded),
                k,
                [len(found[kind]) for kind in crowded],
                [live[kind] for kind in crowded],
            )
            if _iterative_scans():
                again, _ = _run_search(crowded, vector, k, model, 0, iterative=True)
                found.update(again)
    return found, unembedded, live


@lru_cache(maxsize=1)
def _iterative_scans() -> bool:
    """Whether the server's pgvector has iterative scans, asked once a process."""
    version = pgvector_version(connection.alias) or ""
    available = has_iterative_scans(version)
    if not available:
        logger.warning("pgvector %r has no iterative scans: crowded searches stay short", version)
    return available


def has_iterative_scans(version: str) -> bool:
    """pgvector >= 0.8 (the embedded server's and compose's). The migration accepts 0.7, which
    cannot go on past dropped entries: a crowded search then stays as it came back."""
    try:
        major, minor = (int(part) for part in version.split(".")[:2])
    except ValueError:
        return False
    return (major, minor) >= (0, 8)


def _run_search(
    kinds: Sequence[str],
    vector: Sequence[float],
    k: int,
    model: str,
    probe: int,
    *,
    iterative: bool = False,
) -> tuple[dict[str, list[Hit]], dict[str, list[int]]]:
    search = _search_sql(tuple(kinds), len(vector), k, model, probe)
    found: dict[str, list[Hit]] = {kind: [] for kind in kinds}
    unembedded: dict[str, list[int]] = {kind: [] for kind in kinds}
    with ef_search(k, iterative=iterative), binding_cursor(connection.alias) as cursor:
        cursor.execute(search.sql, search.params(vector))
        for row in cursor.fetchall():
            if row[0].startswith(UNEMBEDDED):
                unembedded[row[0].removeprefix(UNEMBEDDED)].append(row[1])
                continue
            hit = Hit(*row)
            found[hit.kind].append(hit)
    for hits in found.values():
        hits.sort(key=lambda hit: -hit.similarity)
    return found, unembedded


# (kind, dimension, model) -> until when (monotonic) the kind is known to hold no searchable
# row: a KG without observations (or with none of this model yet) makes every search short,
# and asking again each time cost a round trip a think (~0.3 ms of ~12). Only the count is
# remembered, never the search: a row added meanwhile is still found, and all that waits
# for the deadline is telling a crowded index apart (``_searchable``) for that kind.
_NONE_SEARCHABLE: dict[tuple[str, int, str], float] = {}
NONE_SEARCHABLE_SECONDS = 10.0


def _searchable(kinds: Sequence[str], dim: int, model: str, k: int) -> dict[str, int]:
    """How many rows of each kind a search could return (its dimension and model, a vector),
    counted up to ``k``. Asked only when a search came back short: a small or empty KG does
    that, and so does a crowded index, which this count tells apart.

    A crowded index: pgvector reads at most ef_search index entries and the query drops the
    ones it cannot return afterwards, dead rows (rolled back, deleted) until a VACUUM and rows
    of another model of the same dimension until ``reembed``. When enough of them lie nearer
    the query than the rest, the search comes back short, even empty, although rows pass."""
    parts = [
        f"SELECT %s, count(*) FROM (SELECT 1 FROM {KINDS[kind]._meta.db_table} "
        f"WHERE embedding_dim = {int(dim)} AND embedding_model = %s AND embedding IS NOT NULL "
        "LIMIT %s) AS searchable"
        for kind in kinds
    ]
    params = [value for kind in kinds for value in (kind, model, k)]
    with connection.cursor() as cursor:
        cursor.execute(" UNION ALL ".join(parts), params)
        counts = {kind: int(count) for kind, count in cursor.fetchall()}
    until = time.monotonic() + NONE_SEARCHABLE_SECONDS
    for kind, count in counts.items():
        if count == 0:
            _NONE_SEARCHABLE[(kind, dim, model)] = until
    return counts
