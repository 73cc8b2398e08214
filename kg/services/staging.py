"""Staging extraction results as pending candidates for moderators."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.db.models.functions import Lower
from django.utils import timezone

from kg.extraction import ExtractedEdge, ExtractedEntity, Extraction
from kg.identity import clean, edge_key, norm, observation_key
from kg.models import (
    Blocklist,
    CandidateStatus,
    Edge,
    EdgeCandidate,
    Entity,
    EntityCandidate,
    Observation,
    ObservationCandidate,
    ThoughtExtraction,
)

# A candidate with one of these statuses already speaks for its identity.
LIVE = (CandidateStatus.PENDING, CandidateStatus.APPROVED, CandidateStatus.AUTO_APPROVED)


@dataclass(frozen=True)
class StageCounts:
    entities: int = 0
    edges: int = 0


def _blocked(kind: str, items: set[str]) -> set[str]:
    if not items:
        return set()
    return set(Blocklist.objects.filter(kind=kind, item__in=items).values_list("item", flat=True))


def _entity_identity(ent: ExtractedEntity) -> tuple[str, str]:
    """The name and type a candidate for ``ent`` is staged with (its identity, lowercased)."""
    return clean(ent.name)[:255], (ent.entity_type or "concept").strip().lower()[:64]


def _edge_identity(edge: ExtractedEdge) -> tuple[str, str, str]:
    """The source, target and relation a candidate for ``edge`` is staged with."""
    return clean(edge.source)[:255], clean(edge.target)[:255], edge.rel_type.strip().lower()[:64]


def submitted(extraction: Extraction) -> StageCounts:
    """How many distinct entities and edges ``extraction`` puts before the moderators, as its
    caller is told: every identity found, whether ``stage_extraction`` writes a new candidate
    for it or finds it already pending, in the graph or blocklisted. What it skipped depends
    on other users' memories and candidates (private ones included) and on moderators'
    decisions, so a count of new rows would let anyone who can stage text test whether a name
    is known."""
    entities = {
        (name.lower(), etype) for name, etype in map(_entity_identity, extraction.entities) if name
    }
    edges = {
        (src.lower(), dst.lower(), rel)
        for src, dst, rel in map(_edge_identity, extraction.edges)
        if src and dst
    }
    return StageCounts(len(entities), len(edges))


def stage_extraction(*, extraction: Extraction, origin: str, thought_id: Any = None) -> StageCounts:
    """Write pending candidates for what ``extraction`` found, skipping identities already
    pending, approved or in the graph, and anything a moderator rejected before."""
    entities = [e for e in extraction.entities if clean(e.name)]
    edges = [e for e in extraction.edges if clean(e.source) and clean(e.target)]
    names = {norm(e.name) for e in entities} | {
        norm(x) for e in edges for x in (e.source, e.target)
    }
    blocked_names = _blocked(Blocklist.Kind.ENTITY, names)
    blocked_edges = _blocked(
        Blocklist.Kind.EDGE, {edge_key(e.source, e.target, e.rel_type) for e in edges}
    )
    known_entities = _known_entities(entities)
    known_edges = _known_edges(edges)
    common = {
        "origin": origin[:32],
        "staged_by_thought_id": thought_id,
        "provider": extraction.provider[:32],
        "model": extraction.model[:128],
        "prompt_hash": extraction.prompt_hash,
    }
    new_entities = _entity_candidates(
        entities, blocked_names=blocked_names, known=known_entities, common=common
    )
    new_edges = _edge_candidates(
        edges,
        blocked_names=blocked_names,
        blocked_edges=blocked_edges,
        known=known_edges,
        common=common,
    )
    with transaction.atomic():
        EntityCandidate.objects.bulk_create(new_entities)
        EdgeCandidate.objects.bulk_create(new_edges)
    return StageCounts(len(new_entities), len(new_edges))


def _known_entities(entities: list[ExtractedEntity]) -> set[tuple[str, str]]:
    """The (name, type) identities, lowercased, of ``entities`` that a live candidate or an
    entity already holds."""
    lowered = {clean(e.name).lower() for e in entities}
    return set(
        EntityCandidate.objects.annotate(n=Lower("name"), t=Lower("entity_type"))
        .filter(n__in=lowered, status__in=LIVE)
        .values_list("n", "t")
    ) | set(
        Entity.objects.annotate(n=Lower("name"), t=Lower("entity_type"))
        .filter(n__in=lowered)
        .values_list("n", "t")
    )


def _known_edges(edges: list[ExtractedEdge]) -> set[tuple[str, str, str]]:
    """The (source, target, relation) triples, names lowercased, among ``edges``' names that a
    live candidate or an edge already holds."""
    ends = {clean(x).lower() for e in edges for x in (e.source, e.target)}
    return set(
        EdgeCandidate.objects.annotate(s=Lower("source_name"), t=Lower("target_name"))
        .filter(s__in=ends, t__in=ends, status__in=LIVE)
        .values_list("s", "t", "rel_type")
    ) | set(
        Edge.objects.annotate(s=Lower("source__name"), t=Lower("target__name"))
        .filter(s__in=ends, t__in=ends)
        .values_list("s", "t", "rel_type")
    )


def _entity_candidates(
    entities: list[ExtractedEntity],
    *,
    blocked_names: set[str],
    known: set[tuple[str, str]],
    common: dict[str, Any],
) -> list[EntityCandidate]:
    """A new candidate for each identity neither known nor blocklisted (once per identity)."""
    new: list[EntityCandidate] = []
    for ent in entities:
        name, etype = _entity_identity(ent)
        key = (name.lower(), etype)
        if norm(name) in blocked_names or key in known:
            continue
        known.add(key)
        new.append(
            EntityCandidate(
                name=name,
                entity_type=etype,
                confidence=ent.confidence,
                aliases=list(ent.aliases),
                **common,
            )
        )
    return new


def _edge_candidates(
    edges: list[ExtractedEdge],
    *,
    blocked_names: set[str],
    blocked_edges: set[str],
    known: set[tuple[str, str, str]],
    common: dict[str, Any],
) -> list[EdgeCandidate]:
    """A new candidate for each relation neither known nor blocklisted, nor naming a
    blocklisted entity (once per relation)."""
    new: list[EdgeCandidate] = []
    for edge in edges:
        src, dst, rel = _edge_identity(edge)
        triple = (src.lower(), dst.lower(), rel)
        if (
            triple in known
            or edge_key(src, dst, rel) in blocked_edges
            or norm(src) in blocked_names
            or norm(dst) in blocked_names
        ):
            continue
        known.add(triple)
        new.append(
            EdgeCandidate(
                source_name=src,
                target_name=dst,
                rel_type=rel,
                confidence=edge.confidence,
                evidence=edge.evidence.replace("\x00", "")[:2000],
                **common,
            )
        )
    return new


@dataclass(frozen=True)
class StagedObservation:
    """An observation to put before the moderators: its name and text, and the entity it is
    of, by name (blank: none) and by id when that entity already exists."""

    name: str
    description: str = ""
    entity_name: str = ""
    entity_id: int | None = None
    data: dict[str, Any] = field(default_factory=dict)
    confidence: float = 1.0


def stage_observations(
    *, observations: list[StagedObservation], origin: str, thought_id: Any = None
) -> int:
    """Write pending candidates for ``observations``, skipping an identity (name and entity
    name, ignoring case) already pending or approved, one a moderator rejected (blocklisted),
    and a name the graph already holds for the same source thought. Returns how many were
    written."""
    items = [o for o in observations if clean(o.name)]
    names = {clean(o.name)[:255] for o in items}
    seen = set(
        ObservationCandidate.objects.annotate(n=Lower("name"), e=Lower("entity_name"))
        .filter(n__in={n.lower() for n in names}, status__in=LIVE)
        .values_list("n", "e")
    )
    blocked = _blocked(
        Blocklist.Kind.OBSERVATION,
        {observation_key(clean(o.name)[:255], clean(o.entity_name)[:255]) for o in items},
    )
    in_graph = set(
        Observation.objects.filter(name__in=names, source_thought_id=thought_id).values_list(
            "name", flat=True
        )
    )
    new: list[ObservationCandidate] = []
    for obs in items:
        name, entity_name = clean(obs.name)[:255], clean(obs.entity_name)[:255]
        key = (name.lower(), entity_name.lower())
        if key in seen or name in in_graph or observation_key(name, entity_name) in blocked:
            continue
        seen.add(key)
        new.append(
            ObservationCandidate(
                name=name,
                description=obs.description,
                data=obs.data,
                entity_name=entity_name,
                entity_id=obs.entity_id,
                confidence=obs.confidence,
                origin=origin[:32],
                staged_by_thought_id=thought_id,
            )
        )
    ObservationCandidate.objects.bulk_create(new)
    return len(new)


def extraction_record(*, thought_id: Any, provider: str) -> None:
    """Record that the thought was extracted (now, by ``provider``), even when nothing was
    staged: ``kg_extract`` goes on past it."""
    ThoughtExtraction.objects.update_or_create(
        thought_id=thought_id,
        defaults={"extracted_at": timezone.now(), "provider": provider[:32]},
    )


def extraction_status(*, thought_id: Any) -> tuple[int, int] | None:
    """(entity candidates, edge candidates) staged from the thought, or None when it has not
    been extracted."""
    if not ThoughtExtraction.objects.filter(thought_id=thought_id).exists():
        return None
    return (
        EntityCandidate.objects.filter(staged_by_thought_id=thought_id).count(),
        EdgeCandidate.objects.filter(staged_by_thought_id=thought_id).count(),
    )
