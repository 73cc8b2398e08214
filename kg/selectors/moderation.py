"""Reads of the moderation queue: for moderators the queue and the entities a candidate may
be; for a writer their own observations still pending."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db.models import Case, IntegerField, Q, QuerySet, Value, When
from django.db.models.functions import Lower

from kg.identity import norm
from kg.models import (
    CandidateStatus,
    EdgeCandidate,
    Entity,
    EntityCandidate,
    ObservationCandidate,
)
from kg.selectors.visibility import memories_visible_to
from legacymind.errors import ServiceError
from legacymind.providers.embeddings import EmbeddingError, get_provider
from legacymind.users import Viewer
from legacymind.vectors.search import nearest

TARGETS = ("entity", "relationship", "observation", "mixed")
AnyCandidate = EntityCandidate | EdgeCandidate | ObservationCandidate


def candidate_kind(cand: AnyCandidate) -> str:
    """The kind a decision names the candidate by: entity, edge or observation."""
    if isinstance(cand, EntityCandidate):
        return "entity"
    return "observation" if isinstance(cand, ObservationCandidate) else "edge"


def _pending_first(qs: QuerySet[Any]) -> QuerySet[Any]:
    return qs.annotate(
        pending_rank=Case(
            When(status=CandidateStatus.PENDING, then=Value(0)),
            default=Value(1),
            output_field=IntegerField(),
        )
    ).order_by("pending_rank", "-created_at", "-id")


def candidate_querysets(
    *, status: str | None = "pending", min_conf: float | None = None, search: str = ""
) -> tuple[QuerySet[EntityCandidate], QuerySet[EdgeCandidate]]:
    entities = EntityCandidate.objects.select_related("staged_by_thought", "reviewed_by")
    edges = EdgeCandidate.objects.select_related("staged_by_thought", "reviewed_by")
    if status:
        entities, edges = entities.filter(status=status), edges.filter(status=status)
    if min_conf is not None:
        entities = entities.filter(confidence__gte=min_conf)
        edges = edges.filter(confidence__gte=min_conf)
    if search:
        entities = entities.filter(name__icontains=search)
        edges = edges.filter(Q(source_name__icontains=search) | Q(target_name__icontains=search))
    return _pending_first(entities), _pending_first(edges)


def observation_candidates(
    *, status: str | None = "pending", min_conf: float | None = None
) -> QuerySet[ObservationCandidate]:
    """Observation candidates, pending first, like :func:`candidate_querysets`' two."""
    rows = ObservationCandidate.objects.select_related("staged_by_thought", "reviewed_by")
    if status:
        rows = rows.filter(status=status)
    if min_conf is not None:
        rows = rows.filter(confidence__gte=min_conf)
    return _pending_first(rows)


def pending_observations(
    *, origin: str, entity_names: Iterable[str] | None = None, words: Iterable[str] | None = None
) -> QuerySet[ObservationCandidate]:
    """The observations staged under ``origin`` that still wait for a moderator, oldest first:
    a writer's own, for their reads. ``entity_names`` keeps those of these entities, ``words``
    those whose text holds one of them (both any case): pending rows have no vector yet, so a
    search finds them by word."""
    rows = ObservationCandidate.objects.filter(origin=origin, status=CandidateStatus.PENDING)
    if entity_names is not None:
        lowered = {name.lower() for name in entity_names}
        rows = rows.annotate(entity_lower=Lower("entity_name")).filter(entity_lower__in=lowered)
    if words is not None:
        # The text is the description; a bare name (no description) is its own text.
        text = Q()
        for word in words:
            text |= Q(description__icontains=word) | Q(description="", name__icontains=word)
        rows = rows.filter(text) if text else rows.none()
    return rows.order_by("created_at", "id")


@dataclass(frozen=True)
class CandidateQueue:
    """The moderation queue, newest first with the kinds merged for ``mixed``, in the shape a
    paginator reads (``count()`` and a slice), so it pages like every other list."""

    entities: QuerySet[EntityCandidate] | None
    edges: QuerySet[EdgeCandidate] | None
    observations: QuerySet[ObservationCandidate] | None = None

    def _kinds(self) -> list[QuerySet[Any]]:
        return [qs for qs in (self.entities, self.edges, self.observations) if qs is not None]

    def count(self) -> int:
        return sum(qs.count() for qs in self._kinds())

    def __getitem__(self, window: slice) -> list[AnyCandidate]:
        start, stop = window.start or 0, window.stop
        kinds = self._kinds()
        if len(kinds) == 1:
            return list(kinds[0][start:stop])
        # Each kind's first ``stop`` rows hold every row of the merged window.
        merged: list[AnyCandidate] = [row for qs in kinds for row in qs[:stop]]
        merged.sort(key=lambda c: (c.status != CandidateStatus.PENDING, -c.created_at.timestamp()))
        return merged[start:stop]


def candidate_queue(
    *, target: str = "mixed", status: str | None = "pending", min_conf: float | None = None
) -> CandidateQueue:
    """The moderation queue like ``memories_moderate`` review."""
    if target not in TARGETS:
        raise ServiceError(f"target must be one of {', '.join(TARGETS)}", fields={"target": target})
    entities, edges = candidate_querysets(status=status, min_conf=min_conf)
    observations = observation_candidates(status=status, min_conf=min_conf)
    return CandidateQueue(
        entities if target in ("entity", "mixed") else None,
        edges if target in ("relationship", "mixed") else None,
        observations if target in ("observation", "mixed") else None,
    )


@dataclass(frozen=True)
class CandidatePage:
    count: int
    rows: list[AnyCandidate]


def candidates_list(
    *,
    target: str = "mixed",
    status: str | None = "pending",
    min_conf: float | None = None,
    limit: int = 50,
    offset: int = 0,
) -> CandidatePage:
    """One page of :func:`candidate_queue`."""
    queue = candidate_queue(target=target, status=status, min_conf=min_conf)
    return CandidatePage(queue.count(), queue[offset : offset + limit])


@dataclass(frozen=True)
class Suggestion:
    entity: Entity
    score: float
    reason: str  # "name" | "embedding"


def suggestions_for(
    candidates: list[EntityCandidate], *, viewer: Viewer, k: int | None = None
) -> dict[int, list[Suggestion]]:
    """Up to ``k`` likely canonical entities per candidate that ``viewer`` may see: by fuzzy
    name match and by embedding similarity of "name (type)", whichever scores higher."""
    entities = memories_visible_to(viewer, Entity)
    k = settings.KG_SUGGESTIONS if k is None else k
    floor = settings.KG_SUGGESTION_MIN_SCORE
    out: dict[int, list[Suggestion]] = {}
    vectors: Any = None
    if candidates:
        try:
            provider = get_provider()
            vectors = provider.embed([f"{c.name} ({c.entity_type})" for c in candidates])
        except EmbeddingError:
            vectors = None  # suggestions by name still help a moderator
    for i, cand in enumerate(candidates):
        best: dict[int, Suggestion] = {}
        tokens = [t for t in re.findall(r"\w+", cand.name.lower()) if len(t) >= 3] or [
            cand.name.lower()
        ]
        query = Q()
        for token in tokens:
            query |= Q(name__icontains=token)
        for entity in entities.filter(query)[:50]:
            score = difflib.SequenceMatcher(None, norm(cand.name), norm(entity.name)).ratio()
            best[entity.pk] = Suggestion(entity, round(score, 3), "name")
        if vectors is not None and k:
            for entity in nearest(entities, vectors[i].tolist(), k, model=provider.model):
                score = float(entity.similarity)  # type: ignore[attr-defined]
                if entity.pk not in best or best[entity.pk].score < score:
                    best[entity.pk] = Suggestion(entity, round(score, 3), "embedding")
        ranked = sorted(best.values(), key=lambda s: -s.score)
        out[cand.pk] = [s for s in ranked if s.score >= floor][:k]
    return out
