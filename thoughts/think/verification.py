"""Hypothesis verification (specs/002 "Hypothesis Verification").

The hypothesis is embedded with the thought (one provider call), its nearest ``verify_top_k``
entities and observations are kept when their similarity reaches ``min_similarity``, and each
is contradicting when its text contains a contradiction pattern, supporting otherwise. Patterns
match whole words, case-insensitively, so "no" does not fire inside "know" (the original's
substring test did). A request's patterns replace the defaults (``THINK_VERIFY_PATTERNS``).
confidence_score = supporting / (supporting + contradicting), 0.5 without evidence; below 0.4
the result suggests a revision. Each list is capped at ``evidence_limit``, most similar first.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.conf import settings

from kg.selectors import MemoryHit as Candidate
from kg.selectors import memories_nearest
from legacymind.providers.embeddings import EmbeddingProvider
from legacymind.users import Viewer

REVISION_BELOW = 0.4


@dataclass(frozen=True)
class VerifyRequest:
    hypothesis: str
    top_k: int
    min_similarity: float
    evidence_limit: int
    patterns: list[str] | None


def _pattern(patterns: list[str]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(p) for p in sorted(patterns, key=len, reverse=True))
    return re.compile(rf"(?<![\w'])(?:{alternatives})(?![\w'])", re.IGNORECASE)


def _item(c: Candidate, matched: str | None) -> dict[str, Any]:
    return {
        "id": c.id,
        "kind": c.kind,
        "ref": c.ref,
        "name": c.name,
        "text": c.text[:400],
        "similarity": round(c.similarity, 4),
        "matched_pattern": matched,
    }


def hypothesis_verify(
    *,
    provider: EmbeddingProvider,
    vector: np.ndarray,
    request: VerifyRequest,
    viewer: Viewer,
) -> dict[str, Any]:
    started = time.perf_counter()
    patterns = request.patterns or list(settings.THINK_VERIFY_PATTERNS)
    contradiction = _pattern(patterns)
    candidates = memories_nearest(
        viewer,
        vector.tolist(),
        model=provider.model,
        k=request.top_k,
        min_similarity=request.min_similarity,
    ).hits
    kept = sorted(
        (c for c in candidates if c.similarity >= request.min_similarity),
        key=lambda c: (-c.similarity, c.kind, c.id),
    )
    supporting: list[dict[str, Any]] = []
    contradicting: list[dict[str, Any]] = []
    for c in kept:
        match = contradiction.search(c.text)
        if match:
            contradicting.append(_item(c, match.group(0).lower()))
        else:
            supporting.append(_item(c, None))
    total = len(supporting) + len(contradicting)
    score = len(supporting) / total if total else 0.5
    revision = (
        f"Consider revising hypothesis based on {len(contradicting)} contradicting items"
        if score < REVISION_BELOW
        else None
    )
    return {
        "hypothesis": request.hypothesis,
        "supporting": supporting[: request.evidence_limit],
        "contradicting": contradicting[: request.evidence_limit],
        "confidence_score": round(score, 4),
        "suggested_revision": revision,
        "telemetry": {
            "embedding_dim": provider.dim,
            "provider": provider.name,
            "model": provider.model,
            "time_ms": round((time.perf_counter() - started) * 1000, 2),
            "matched_support": len(supporting),
            "matched_contradict": len(contradicting),
            "candidates_after_similarity": len(kept),
            "top_k": request.top_k,
            "min_similarity": request.min_similarity,
            "evidence_limit": request.evidence_limit,
            "patterns": patterns,
        },
    }
