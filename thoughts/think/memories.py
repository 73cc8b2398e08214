"""KG candidates for injection and verification: the nearest entities and observations of the
query's dimension from the HNSW index (``kg_search``), widened while rows pass, minus anything
another user may not show you.

A memory extracted from a private thought belongs to that thought's owner: it is never offered
to anyone else, neither injected nor cited as evidence.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np
from django.utils import timezone

from kg.models import Entity, Observation
from legacymind.providers.embeddings import EmbeddingError, EmbeddingProvider, fields_for
from thoughts.think.kg_search import Hit, search

logger = logging.getLogger("thoughts.think")

REF_PREFIX = {"entity": "kge", "observation": "kgo"}


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


@dataclass
class Nearest:
    candidates: list[Candidate]
    # Ids of KG rows without a vector, by kind, when the search was asked to probe for them.
    unembedded: dict[str, list[int]]


def kg_nearest(
    *,
    vector: Sequence[float],
    model: str,
    k: int,
    owner_id: int | None,
    min_similarity: float = -1.0,
    fallback: float | None = None,
    kinds: Sequence[str] = ("entity", "observation"),
    probe_unembedded: int = 0,
) -> Nearest:
    """The rows of each kind among its ``k`` nearest (same dimension, embedded by ``model``, the
    model of ``vector``) whose similarity reaches ``min_similarity``, private-to-others rows
    removed; when none does and a lower ``fallback`` is given (injection's floor), the rows that
    reach ``fallback`` instead.

    Only rows above the bar are ever used, so the search starts small and widens (x4, up to
    ``k``) only while the farthest row found still passes: the answer is the same as one search
    for ``k`` neighbours, without paying for a wide ``ef_search`` when the graph holds few
    related rows. The fallback goes on from the rows the first bar's search already found
    (searching them again cost a think ~9 ms at 100k entities), and widens straight to ``k``:
    rows of no particular relation clear a floor of 0.15 by the hundred in a large graph, so a
    fallback search that does not stop at its first step practically never stops before ``k``.

    ``probe_unembedded`` > 0 also returns the ids of up to that many rows of each kind that
    have no vector yet, found in the first search's round trip (a think asks every time, and
    the answer is nearly always none: a query of its own cost a round trip a think)."""
    hits: dict[str, list[Hit]] = {}  # each kind's rows from its widest search so far
    steps: dict[str, int] = {}
    live: dict[str, int] = {}  # each kind's searchable rows, counted up to its last step
    unembedded: dict[str, list[int]] = {kind: [] for kind in kinds}
    bar, probe = min_similarity, probe_unembedded
    pending, step = list(kinds), min(k, FIRST_STEP)
    while True:
        while pending:
            found, first, counted = search(pending, vector, step, model, probe)
            if probe:
                unembedded, probe = first, 0
            hits.update(found)
            live.update(counted)
            steps.update(dict.fromkeys(pending, step))
            pending, step = _to_widen(pending, hits, steps, live, k, bar), min(k, step * GROWTH)
        candidates = _visible(hits, bar, owner_id)
        if candidates or fallback is None or fallback >= bar:
            return Nearest(candidates, unembedded)
        bar, fallback = fallback, None
        pending, step = _to_widen(list(kinds), hits, steps, live, k, bar), k  # straight to k


def _to_widen(
    kinds: list[str],
    hits: dict[str, list[Hit]],
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


def _visible(hits: dict[str, list[Hit]], bar: float, owner_id: int | None) -> list[Candidate]:
    return [
        _candidate(hit)
        for rows in hits.values()
        for hit in rows
        if hit.similarity >= bar and hit.visible_to(owner_id)
    ]


def _candidate(hit: Hit) -> Candidate:
    if hit.kind == "entity":
        text = Entity.text_of(hit.name, hit.label)
        if hit.description:
            text = f"{text} {hit.description}"
    else:
        text = Observation.text_of(hit.name, hit.description)
    return Candidate(
        kind=hit.kind,
        id=hit.id,
        name=hit.name,
        label=hit.label,
        text=text,
        similarity=float(hit.similarity),
        significance=hit.significance,
        access_count=hit.access_count,
        last_used=datetime.fromtimestamp(hit.last_used, UTC),
    )


def kg_backfill(*, provider: EmbeddingProvider, ids: dict[str, list[int]]) -> int:
    """Embed (and save) the KG rows ``ids`` (by kind) that still have no vector, so the index
    can find them. A provider failure is logged, not raised: the thought itself is already
    embedded."""
    if not any(ids.values()):
        return 0
    rows: list[Any] = [
        *Entity.objects.filter(id__in=ids.get("entity", []), embedding_dim__isnull=True),
        *Observation.objects.filter(id__in=ids.get("observation", []), embedding_dim__isnull=True),
    ]
    if not rows:  # embedded meanwhile (the after-commit task, another think)
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
