"""KG candidates for injection and verification: the nearest entities and observations of the
query's dimension from the HNSW index, minus anything another user may not show you.

A memory extracted from a private thought belongs to that thought's owner: it is never offered
to anyone else, neither injected nor cited as evidence.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.db.models import CharField, QuerySet, Value
from django.utils import timezone

from kg.models import Entity, Observation
from legacymind.providers.embeddings import EmbeddingError, EmbeddingProvider, fields_for
from legacymind.vectors import nearest

logger = logging.getLogger("thoughts.think")

KINDS: dict[str, type[Entity] | type[Observation]] = {"entity": Entity, "observation": Observation}
REF_PREFIX = {"entity": "kge", "observation": "kgo"}
_FIELDS = (
    "id", "name", "description", "significance", "access_count", "last_accessed", "created_at",
    "source_thought", "source_thought__is_private", "source_thought__owner",
)  # fmt: skip


@dataclass
class Candidate:
    kind: str
    id: int
    name: str
    label: str  # entity_type for entities, description for observations
    text: str  # what the row embeds as: "name (type)" / "name - description"
    similarity: float
    significance: float
    access_count: int
    last_used: datetime

    @property
    def ref(self) -> str:
        return f"{REF_PREFIX[self.kind]}:{self.id}"


FIRST_STEP = 40  # pgvector's default hnsw.ef_search: the first search needs no SET
GROWTH = 4


@contextmanager
def ef_search(k: int) -> Iterator[None]:
    """hnsw.ef_search for the queries inside: the index returns at most ef_search rows, so k
    neighbours need ef_search >= k (pgvector caps it at 1000). ``SURR_INJECT_EF_SEARCH`` raises
    the floor for more recall."""
    ef = min(max(k, settings.SURR_INJECT_EF_SEARCH, FIRST_STEP), 1000)
    if ef == FIRST_STEP:
        yield
        return
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT set_config('hnsw.ef_search', %s, true)", [str(ef)])
        yield


def _visible(row: Any, owner_id: int | None) -> bool:
    if row.source_thought_id is None:
        return True
    thought = row.source_thought
    return not thought.is_private or thought.owner_id == owner_id


def _search(
    kinds: Sequence[str], vector: Sequence[float], k: int
) -> dict[str, list[tuple[int, float]]]:
    """The k nearest (id, similarity) of each kind, most similar first, in one round trip."""
    parts = []
    for kind in kinds:
        table: QuerySet[Any] = KINDS[kind].objects.all()
        parts.append(
            nearest(table, vector, k)
            .annotate(kind=Value(kind, output_field=CharField()))
            .values_list("kind", "id", "similarity")
        )
    query = parts[0].union(*parts[1:], all=True) if len(parts) > 1 else parts[0]
    found: dict[str, list[tuple[int, float]]] = {kind: [] for kind in kinds}
    with ef_search(k):
        for kind, pk, similarity in query:
            found[kind].append((pk, float(similarity)))
    for pairs in found.values():
        pairs.sort(key=lambda pair: -pair[1])
    return found


def kg_nearest(
    *,
    vector: Sequence[float],
    k: int,
    owner_id: int | None,
    min_similarity: float = -1.0,
    kinds: Sequence[str] = ("entity", "observation"),
) -> list[Candidate]:
    """The rows of each kind among its ``k`` nearest (same dimension) whose similarity reaches
    ``min_similarity``, private-to-others rows removed.

    Only rows above ``min_similarity`` are ever used, so the search starts small and widens
    (x4, up to ``k``) only while the farthest row found still passes: the answer is the same
    as one search for ``k`` neighbours, without paying for a wide ``ef_search`` when the
    graph holds few related rows. Rows are then loaded for the hits alone."""
    hits: dict[str, list[tuple[int, float]]] = {}
    pending, step = list(kinds), min(k, FIRST_STEP)
    while pending:
        found = _search(pending, vector, step)
        widen = []
        for kind in pending:
            pairs = found[kind]
            hits[kind] = [pair for pair in pairs if pair[1] >= min_similarity]
            # Widen while the farthest row found still passes. Not only when ``step`` rows came
            # back: dead row versions (updates, rollbacks) take slots in the index's search
            # and can leave it short of ``step`` live rows though more exist.
            if step < k and pairs and pairs[-1][1] >= min_similarity:
                widen.append(kind)
        pending, step = widen, min(k, step * GROWTH)
    out: list[Candidate] = []
    for kind, pairs in hits.items():
        if not pairs:
            continue
        fields = (*_FIELDS, "entity_type") if kind == "entity" else _FIELDS
        base: QuerySet[Any] = KINDS[kind].objects.select_related("source_thought").only(*fields)
        rows: dict[Any, Any] = base.in_bulk([pk for pk, _ in pairs])
        for pk, similarity in pairs:
            row = rows.get(pk)
            if row is not None and _visible(row, owner_id):
                out.append(_candidate(kind, row, similarity))
    return out


def _candidate(kind: str, row: Any, similarity: float) -> Candidate:
    if kind == "entity":
        label, text = row.entity_type, row.embedding_text()
        if row.description:
            text = f"{text} {row.description}"
    else:
        label, text = row.description, row.embedding_text()
    return Candidate(
        kind=kind,
        id=row.pk,
        name=row.name,
        label=label,
        text=text,
        similarity=similarity,
        significance=row.significance,
        access_count=row.access_count,
        last_used=row.last_accessed or row.created_at,
    )


def kg_backfill(*, provider: EmbeddingProvider, limit: int) -> int:
    """Embed (and save) up to ``limit`` KG rows that have no vector yet, so the index can find
    them. A provider failure is logged, not raised: the thought itself is already embedded."""
    if limit <= 0:
        return 0
    missing = (
        Entity.objects.filter(embedding_dim__isnull=True)
        .annotate(kind=Value("entity", output_field=CharField()))
        .values_list("kind", "id")[:limit]
        .union(
            Observation.objects.filter(embedding_dim__isnull=True)
            .annotate(kind=Value("observation", output_field=CharField()))
            .values_list("kind", "id")[:limit],
            all=True,
        )
    )
    ids: dict[str, list[int]] = {"entity": [], "observation": []}
    for kind, pk in list(missing)[:limit]:  # one round trip when nothing is missing
        ids[kind].append(pk)
    if not ids["entity"] and not ids["observation"]:
        return 0
    rows: list[Any] = [
        *Entity.objects.filter(id__in=ids["entity"]),
        *Observation.objects.filter(id__in=ids["observation"]),
    ]
    try:
        vectors: np.ndarray = provider.embed([row.embedding_text() for row in rows])
    except EmbeddingError as exc:
        logger.warning("think.backfill_failed rows=%d error=%s", len(rows), exc)
        return 0
    now = timezone.now()
    names: list[str] = []
    for row, vector in zip(rows, vectors, strict=True):
        fields = fields_for(provider, vector)
        for key, value in fields.items():
            setattr(row, key, value)
        row.updated_at = now
        names = [*fields.keys(), "updated_at"]
    Entity.objects.bulk_update([r for r in rows if isinstance(r, Entity)], names)
    Observation.objects.bulk_update([r for r in rows if isinstance(r, Observation)], names)
    return len(rows)
