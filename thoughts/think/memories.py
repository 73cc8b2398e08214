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
from django.db.models import QuerySet
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


@contextmanager
def ef_search(k: int) -> Iterator[None]:
    """hnsw.ef_search for the queries inside: the index returns at most ef_search rows, so a
    pool of k neighbours needs ef_search >= k (pgvector caps it at 1000)."""
    ef = settings.SURR_INJECT_EF_SEARCH or k
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT set_config('hnsw.ef_search', %s, true)", [str(min(max(ef, 40), 1000))]
        )
        yield


def _visible(row: Any, owner_id: int | None) -> bool:
    if row.source_thought_id is None:
        return True
    thought = row.source_thought
    return not thought.is_private or thought.owner_id == owner_id


def kg_nearest(
    *,
    vector: Sequence[float],
    k: int,
    owner_id: int | None,
    min_similarity: float = -1.0,
    kinds: Sequence[str] = ("entity", "observation"),
) -> list[Candidate]:
    """Up to ``k`` nearest rows of each kind (same dimension) with at least ``min_similarity``,
    private-to-others rows removed.

    The index search returns only ids and similarities; rows are loaded for the few that pass
    ``min_similarity``, because building hundreds of model instances per request cost more
    than the search itself."""
    hits: dict[str, list[tuple[int, float]]] = {}
    with ef_search(k):
        for kind in kinds:
            table: QuerySet[Any] = KINDS[kind].objects.all()
            found = nearest(table, vector, k).values_list("id", "similarity")
            hits[kind] = [(pk, float(sim)) for pk, sim in found if sim >= min_similarity]
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
    rows: list[Any] = list(Entity.objects.filter(embedding_dim__isnull=True)[:limit])
    rows += list(Observation.objects.filter(embedding_dim__isnull=True)[: limit - len(rows)])
    if not rows:
        return 0
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
