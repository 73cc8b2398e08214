"""Memory injection (specs/002 "Memory Injection & Orbital Mechanics").

Scale 0 injects nothing; scales 1/2/3 inject up to 5/10/20 memories whose similarity passes
t1/t2/t3 (``THINK_INJECT_T1..T3``), shifted by the submode's delta when
``THINK_SUBMODE_RETRIEVAL`` is on. When nothing passes, memories above ``THINK_INJECT_FLOOR``
are used instead. Candidates are the nearest entities and observations from the HNSW index
(a pool per think mode); thresholds apply to similarity, and the survivors are ranked by an
orbital relevance that also weighs recency, significance and access (``THINK_ORBITAL_*``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
from django.conf import settings
from django.utils import timezone

from kg.selectors import MemoryHit as Candidate
from kg.selectors import Nearest, memories_nearest
from kg.services import memories_backfill
from legacymind.providers.embeddings import EmbeddingProvider
from legacymind.users import Viewer
from thoughts.think.frameworks.profiles import profile_for

SCALE_LIMITS = {1: 5, 2: 10, 3: 20}
ENRICHED_MAX = 5  # memories listed in enriched_content, as in the original

POOL_SETTINGS = {
    "question": "KG_CANDIDATES_THINK_CONVO",
    "conclude": "KG_CANDIDATES_THINK_CONVO",
    "plan": "KG_CANDIDATES_THINK_PLAN",
    "debug": "KG_CANDIDATES_THINK_DEBUG",
    "build": "KG_CANDIDATES_THINK_BUILD",
    "stuck": "KG_CANDIDATES_THINK_STUCK",
}


@dataclass
class Injected:
    candidate: Candidate
    score: float
    reason: str  # "threshold" | "floor"
    rank: int

    def as_dict(self) -> dict[str, Any]:
        c = self.candidate
        return {
            "id": c.id,
            "kind": c.kind,
            "ref": c.ref,
            "name": c.name,
            "similarity": round(c.similarity, 4),
            "score": round(self.score, 4),
            "rank": self.rank,
            "reason": self.reason,
        }


@dataclass
class Injection:
    scale: int
    limit: int = 0
    threshold: float | None = None
    floor: float | None = None
    submode_delta: float = 0.0
    pool: int = 0
    candidates: int = 0
    backfilled: int = 0
    used_floor: bool = False
    memories: list[Injected] = field(default_factory=list)
    enriched: str | None = None

    def telemetry(self) -> dict[str, Any]:
        return {
            "scale": self.scale,
            "limit": self.limit,
            "threshold": self.threshold,
            "floor": self.floor,
            "submode_delta": self.submode_delta,
            "pool": self.pool,
            "candidates_passing": self.candidates,  # threshold, or floor when none passed
            "backfilled": self.backfilled,
            "used_floor": self.used_floor,
        }


def pool_for(mode: str) -> int:
    name = POOL_SETTINGS.get(mode)
    return int(getattr(settings, name)) if name else int(settings.KG_CANDIDATES)


def threshold_for(scale: int, submode: str | None) -> tuple[float, float]:
    """(threshold, submode delta) for a scale of 1..3."""
    base = {1: settings.THINK_INJECT_T1, 2: settings.THINK_INJECT_T2, 3: settings.THINK_INJECT_T3}
    threshold = float(base[scale])
    delta = 0.0
    if settings.THINK_SUBMODE_RETRIEVAL and submode:
        delta = profile_for(submode).threshold_delta
        threshold = min(max(threshold + delta, 0.0), 0.99)
    return round(threshold, 6), delta


@dataclass(frozen=True)
class Orbital:
    """The orbital relevance weights, read from settings once per selection (a settings
    attribute costs a lazy-object lookup; a think scores ~20-40 candidates with eight each)."""

    w_similarity: float
    w_recency: float
    w_significance: float
    w_access: float
    half_life_days: float
    log_saturation: float

    @classmethod
    def from_settings(cls) -> Orbital:
        return cls(
            w_similarity=settings.THINK_ORBITAL_W_SIMILARITY,
            w_recency=settings.THINK_ORBITAL_W_RECENCY,
            w_significance=settings.THINK_ORBITAL_W_SIGNIFICANCE,
            w_access=settings.THINK_ORBITAL_W_ACCESS,
            half_life_days=settings.THINK_ORBITAL_HALF_LIFE_DAYS,
            log_saturation=math.log1p(settings.THINK_ORBITAL_ACCESS_SATURATION),
        )

    def score(self, c: Candidate, now: datetime) -> float:
        age_days = max((now - c.last_used).total_seconds(), 0.0) / 86400
        recency = 0.5 ** (age_days / self.half_life_days)
        access = min(1.0, math.log1p(c.access_count) / self.log_saturation)
        return (
            self.w_similarity * c.similarity
            + self.w_recency * recency
            + self.w_significance * min(max(c.significance, 0.0), 1.0)
            + self.w_access * access
        )


def select(
    candidates: list[Candidate], *, threshold: float, floor: float, limit: int, now: datetime
) -> tuple[list[Injected], bool]:
    """Threshold on similarity (or the floor when nothing passes), then rank by orbital score."""
    chosen = [c for c in candidates if c.similarity >= threshold]
    reason = "threshold"
    if not chosen:
        chosen = [c for c in candidates if c.similarity >= floor]
        reason = "floor"
    orbital = Orbital.from_settings()
    scored = sorted(
        ((orbital.score(c, now), c) for c in chosen),
        key=lambda pair: (-pair[0], -pair[1].similarity, pair[1].kind, pair[1].id),
    )
    picked = [
        Injected(candidate=c, score=score, reason=reason, rank=i + 1)
        for i, (score, c) in enumerate(scored[:limit])
    ]
    return picked, reason == "floor" and bool(picked)


def enriched_content(memories: list[Injected], submode: str | None) -> str | None:
    """The spec's format: an optional submode line, then the first five memories."""
    if not memories:
        return None
    lines = [f"Submode: {submode}"] if submode else []
    lines.append("Nearby entities:")
    for item in memories[:ENRICHED_MAX]:
        c = item.candidate
        label = c.label.strip().replace("\n", " ")[:120]
        lines.append(f"- ({c.similarity:.2f}) {c.name}" + (f" [{label}]" if label else ""))
    return "\n".join(lines) + "\n"


def _first(ids: dict[str, list[int]], limit: int) -> dict[str, list[int]]:
    """At most ``limit`` ids in all, entities first."""
    out: dict[str, list[int]] = {}
    for kind, pks in ids.items():
        out[kind] = pks[: max(limit - sum(map(len, out.values())), 0)]
    return out


def memories_inject(
    *,
    provider: EmbeddingProvider,
    vector: np.ndarray,
    scale: int,
    mode: str,
    submode: str | None,
    viewer: Viewer,
) -> Injection:
    """Choose the memories for one thought. Reads only, apart from the vector backfill; the
    caller stores the result and bumps access counts in the thought's own write."""
    scale = min(max(scale, 0), 3)
    result = Injection(scale=scale)
    if scale == 0:
        return result
    result.limit = SCALE_LIMITS[scale]
    threshold, result.submode_delta = threshold_for(scale, submode)
    floor = float(settings.THINK_INJECT_FLOOR)
    result.threshold, result.floor = threshold, floor
    result.pool = pool_for(mode)
    # The first search also asks for KG rows without a vector (in the same round trip); when it
    # finds some, they are embedded and saved and the search runs again to consider them.
    backfill_max = int(settings.THINK_INJECT_BACKFILL_MAX)
    values = vector.tolist()

    def search(probe: int = 0) -> Nearest:
        # Down to the floor only when nothing passes the threshold (``memories_nearest``'s
        # fallback). Noise rows (random directions sit near cosine 0 +- 0.05 at 384-d) clear a
        # floor of 0.15 by the hundred in a large graph, so one search to the floor would
        # always have to widen to the whole pool.
        return memories_nearest(
            viewer,
            values,
            model=provider.model,
            k=result.pool,
            min_similarity=threshold,
            fallback=floor,
            probe_unembedded=probe,
        )

    found = search(probe=backfill_max)
    if any(found.unembedded.values()):  # always empty when backfill_max is 0 (no probe)
        result.backfilled = memories_backfill(
            provider=provider, ids=_first(found.unembedded, backfill_max)
        )
        if result.backfilled:
            found = search()
    candidates = found.hits
    result.candidates = len(candidates)
    result.memories, result.used_floor = select(
        candidates,
        threshold=threshold,
        floor=floor,
        limit=result.limit,
        now=timezone.now(),
    )
    result.enriched = enriched_content(result.memories, submode)
    return result
