"""The nearest memories a user may see: the one read behind think injection and verification,
``legacymind_search``, the KG search and the inner voice (:func:`memories_nearest`).

The search runs on the KG's HNSW indexes, entities and observations in one round trip, with
the SQL compiled once per shape and the viewer's id bound as a parameter. The privacy rule is
``visibility.visible_q``, compiled into that SQL: another user's private memories never reach
Python. What a crowded index left out (``_searchable``) is searched again. The SQL is
``nearest_sql``'s, the hits ``hits``'.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from django.db import connection
from django.db.models import F, QuerySet

from kg.selectors.hits import KINDS, MemoryHit, Nearest, hit_from_row
from kg.selectors.nearest_sql import run_search
from kg.selectors.visibility import visible_q
from legacymind.providers.embeddings import get_provider
from legacymind.users import Viewer, viewer_id
from legacymind.vectors.search import nearest_or_exact, pgvector_version

logger = logging.getLogger("kg.nearest")

FIRST_STEP = 40  # pgvector's default hnsw.ef_search: the first search needs no SET
GROWTH = 4


def memories_nearest(
    viewer: Viewer,
    vector: Sequence[float],
    *,
    model: str,
    k: int,
    kinds: Sequence[str] = ("entity", "observation"),
    min_similarity: float = -1.0,
    fallback: float | None = None,
    own_private: bool = True,
    from_thoughts: QuerySet[Any] | None = None,
    probe_unembedded: int = 0,
) -> Nearest:
    """The memories ``viewer`` may see among each kind's ``k`` nearest to ``vector`` (rows of
    its dimension embedded by ``model``), whose similarity reaches ``min_similarity``, most
    similar first; when none does and a lower ``fallback`` is given (injection's floor), the
    rows that reach ``fallback`` instead.

    ``own_private=False`` leaves out the viewer's own private memories too (the inner voice
    without ``include_private``). ``from_thoughts`` keeps only memories drawn from those
    thoughts (a chain of the viewer's); such a subset is ranked exactly when the index comes
    back short. ``probe_unembedded`` > 0 also returns the ids of up to that many rows of each
    kind without a vector, found in the first search's round trip.

    Only rows above the bar are used, so the search starts small and widens (x4, up to ``k``)
    only while the farthest row found still passes: the answer is that of one search for ``k``
    neighbours, without paying for a wide ``ef_search`` when few rows are related. The
    fallback goes on from the rows the first search found, straight to ``k``: unrelated rows
    clear a floor of 0.15 by the hundred in a large graph."""
    owner = viewer_id(viewer) if own_private else None
    if from_thoughts is not None:
        return Nearest(_subset(kinds, vector, model, k, owner, from_thoughts, min_similarity), {})
    hits: dict[str, list[MemoryHit]] = {}  # each kind's rows from its widest search so far
    steps: dict[str, int] = {}
    live: dict[str, int] = {}  # each kind's searchable rows, counted up to its last step
    unembedded: dict[str, list[int]] = {kind: [] for kind in kinds}
    bar, probe = min_similarity, probe_unembedded
    pending, step = list(kinds), min(k, FIRST_STEP)
    while True:
        while pending:
            found, first, counted = _search(pending, vector, step, model, probe, owner)
            if probe:
                unembedded, probe = first, 0
            hits.update(found)
            live.update(counted)
            steps.update(dict.fromkeys(pending, step))
            pending, step = _to_widen(pending, hits, steps, live, k, bar), min(k, step * GROWTH)
        passing = _passing(hits, bar)
        if passing or fallback is None or fallback >= bar:
            return Nearest(passing, unembedded)
        bar, fallback = fallback, None
        pending, step = _to_widen(list(kinds), hits, steps, live, k, bar), k  # straight to k


def _passing(hits: dict[str, list[MemoryHit]], bar: float) -> list[MemoryHit]:
    rows = [hit for found in hits.values() for hit in found if hit.similarity >= bar]
    rows.sort(key=lambda hit: -hit.similarity)
    return rows


def _subset(
    kinds: Sequence[str],
    vector: Sequence[float],
    model: str,
    k: int,
    owner: int | None,
    thoughts: QuerySet[Any],
    bar: float,
) -> list[MemoryHit]:
    """Each kind's ``k`` nearest visible rows drawn from ``thoughts``, exactly ranked when the
    index comes back short (a filtered search reads at most ef_search index entries)."""
    hits: list[MemoryHit] = []
    for kind in kinds:
        rows = (
            KINDS[kind]
            .objects.filter(visible_q(owner), source_thought__in=thoughts)
            .annotate(
                source_private=F("source_thought__is_private"),
                source_owner=F("source_thought__owner_id"),
            )
            .defer("embedding")
        )
        hits += [hit_from_row(kind, row) for row in nearest_or_exact(rows, list(vector), model, k)]
    hits = [hit for hit in hits if hit.similarity >= bar]
    hits.sort(key=lambda hit: -hit.similarity)
    return hits


def _to_widen(
    kinds: list[str],
    hits: dict[str, list[MemoryHit]],
    steps: dict[str, int],
    live: dict[str, int],
    k: int,
    bar: float,
) -> list[str]:
    """The kinds whose farthest row found still reaches ``bar`` while their search stopped
    short of ``k``, and whose table holds more rows than that search could return: a small KG
    whose rows the first search all returned is not searched twice more."""
    return [
        kind
        for kind in kinds
        if steps[kind] < k
        and live[kind] >= steps[kind]
        and hits[kind]
        and hits[kind][-1].similarity >= bar
    ]


def _search(
    kinds: Sequence[str],
    vector: Sequence[float],
    k: int,
    model: str,
    probe: int,
    owner: int | None,
) -> tuple[dict[str, list[MemoryHit]], dict[str, list[int]], dict[str, int]]:
    """The k nearest rows of each kind, most similar first; how many rows of each kind the
    search could have returned, up to k; and (``probe`` > 0) the ids of up to ``probe`` rows of
    each kind without a vector, in one round trip while the index answers in full."""
    found, unembedded = run_search(kinds, vector, k, model, probe, owner)
    live = {kind: k for kind in kinds}
    short = [kind for kind in kinds if len(found[kind]) < k]
    now = time.monotonic()
    empty = [
        kind for kind in short if _NONE_SEARCHABLE.get((kind, len(vector), model, owner), 0) > now
    ]
    live.update(dict.fromkeys(empty, 0))
    ask = [kind for kind in short if kind not in empty]
    if ask:
        live.update(_searchable(ask, len(vector), model, k, owner))
        crowded = [kind for kind in short if len(found[kind]) < live[kind]]
        if crowded:
            logger.info(
                "kg.search_crowded kinds=%s k=%d returned=%s searchable=%s (the index holds "
                "entries this search cannot use: dead rows before a VACUUM, or vectors of "
                "another model before reembed)",
                ",".join(crowded),
                k,
                [len(found[kind]) for kind in crowded],
                [live[kind] for kind in crowded],
            )
            if _iterative_scans():
                again, _ = run_search(crowded, vector, k, model, 0, owner, iterative=True)
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


# (kind, dimension, model, viewer) -> until when (monotonic) the kind is known to hold no searchable
# row: a KG without observations (or with none of this model yet) makes every search short,
# and asking again each time cost a round trip a think (~0.3 ms of ~12). Only the count is
# remembered, never the search: a row added meanwhile is still found, and all that waits
# for the deadline is telling a crowded index apart (``_searchable``) for that kind.
_NONE_SEARCHABLE: dict[tuple[str, int, str, int | None], float] = {}
NONE_SEARCHABLE_SECONDS = 10.0


def _searchable(
    kinds: Sequence[str], dim: int, model: str, k: int, owner: int | None
) -> dict[str, int]:
    """How many rows of each kind a search could return (its dimension and model, a vector,
    visible to ``owner``), counted up to ``k``. Asked only when a search came back short: a small or empty KG does
    that, and so does a crowded index, which this count tells apart.

    A crowded index: pgvector reads at most ef_search index entries and the query drops the
    ones it cannot return afterwards, dead rows (rolled back, deleted) until a VACUUM and rows
    of another model of the same dimension until ``reembed``. When enough of them lie nearer
    the query than the rest, the search comes back short, even empty, although rows pass."""
    parts: list[str] = []
    params: list[Any] = []
    for kind in kinds:
        rows = KINDS[kind].objects.filter(
            visible_q(owner), embedding_dim=dim, embedding_model=model, embedding__isnull=False
        )
        sql, values = rows.values("id")[:k].query.sql_with_params()
        parts.append(f"SELECT %s, count(*) FROM ({sql}) AS searchable")
        params += [kind, *values]
    with connection.cursor() as cursor:
        cursor.execute(" UNION ALL ".join(parts), params)
        counts = {kind: int(count) for kind, count in cursor.fetchall()}
    until = time.monotonic() + NONE_SEARCHABLE_SECONDS
    for kind, count in counts.items():
        if count == 0:
            _NONE_SEARCHABLE[(kind, dim, model, owner)] = until
    return counts


def kg_search(
    *, query: str, viewer: Viewer, target: str = "mixed", top_k: int = 10
) -> list[MemoryHit]:
    """The KG search: the ``top_k`` entities and observations nearest to ``query`` that
    ``viewer`` may see, most similar first."""
    provider = get_provider()
    kinds = ("entity", "observation") if target == "mixed" else (target,)
    vector = provider.embed([query])[0].tolist()
    return memories_nearest(viewer, vector, model=provider.model, k=top_k, kinds=kinds).hits[:top_k]
