"""The think benchmark's data and its references: the synthetic KG and query texts, the exact
injection the API's answer is held to, and the original design's injection step.

Import it after bench/think.py has set the environment (it imports Django's models)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
from _common import load_entities
from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.utils import timezone

from kg.models import Entity
from kg.selectors import MemoryHit as Candidate
from legacymind.providers.embeddings import get_provider
from thoughts.think.injection import SCALE_LIMITS, pool_for, select, threshold_for

DIM = 384
ORIGINAL_POOL = 500
HINT = "question"


VOCAB = [f"w{i}" for i in range(5000)]


def query_texts(rng: np.random.Generator, count: int) -> list[str]:
    return [" ".join(rng.choice(VOCAB, size=12, replace=False)) for _ in range(count)]


def entity_names(n: int, texts: list[str], related: int, seed: int) -> list[str]:
    """Entity names the way a KG holds them: a few words each, ``related`` per query text
    sharing 1-4 consecutive words with it (plus 0-2 words of their own), the rest random
    words. Every name ends in a unique token (names are unique per type)."""
    rng = np.random.default_rng(seed)
    names: list[str] = []
    for text in texts:
        words = text.split()
        for _ in range(related):
            size = int(rng.integers(1, 5))
            start = int(rng.integers(0, len(words) - size + 1))
            extra = list(rng.choice(VOCAB, size=int(rng.integers(0, 3))))
            names.append(" ".join([*words[start : start + size], *extra, f"u{len(names)}"]))
    while len(names) < n:
        words = list(rng.choice(VOCAB, size=int(rng.integers(2, 5))))
        names.append(" ".join([*words, f"u{len(names)}"]))
    return names


def load(names: list[str], vectors: np.ndarray, seed: int) -> tuple[np.ndarray, float, float]:
    """Empty the KG and thoughts and load the entities (see ``load_entities``), with spread-out
    significance, access counts and last use so the orbital ranking has something to rank.
    Returns the primary keys in row order, load seconds and index build seconds."""
    from psycopg.types.json import Jsonb

    rng = np.random.default_rng(seed + 1)
    now = datetime.now(UTC)
    significance = rng.uniform(0, 1, len(vectors))
    access = rng.integers(0, 20, len(vectors))
    age_days = rng.uniform(0, 90, len(vectors))
    provider = get_provider()
    rows = (
        (names[i], "concept", "", Jsonb({}), [], vector, provider.name, provider.model, DIM, now,
         float(significance[i]), int(access[i]), now - timedelta(days=float(age_days[i])), now,
         now)
        for i, vector in enumerate(vectors)
    )  # fmt: skip
    by_name, loaded, indexed = load_entities(
        rows, truncate=("kg_entity", "kg_observation", "thoughts_thought")
    )
    return np.array([by_name[name] for name in names]), loaded, indexed


def candidates_for(pks: list[int], sims: dict[int, float]) -> list[Candidate]:
    rows = Entity.objects.filter(id__in=pks).only(
        "id", "name", "entity_type", "significance", "access_count", "last_accessed", "created_at"
    )
    return [
        Candidate(
            kind="entity", id=r.pk, similarity=sims[r.pk], name=r.name, label=r.entity_type,
            description="", significance=r.significance, access_count=r.access_count,
            used=(r.last_accessed or r.created_at).timestamp(), created=r.created_at.timestamp(),
            source_thought_id=None, source_private=None, source_owner_id=None,
        )
        for r in rows
    ]  # fmt: skip


def exact_injection(matrix: np.ndarray, pks: np.ndarray, query: np.ndarray) -> set[int]:
    """The pipeline's selection over an exact search: same pool, thresholds, orbital rank."""
    pool, (threshold, _) = pool_for(HINT), threshold_for(3, None)
    floor = settings.THINK_INJECT_FLOOR
    sims = matrix @ query
    top = np.argpartition(-sims, pool)[:pool] if pool < len(sims) else np.arange(len(sims))
    keep = [int(i) for i in top if sims[i] >= min(threshold, floor)]
    by_pk = {int(pks[i]): float(sims[i]) for i in keep}
    picked, _ = select(
        candidates_for(list(by_pk), by_pk),
        threshold=threshold,
        floor=floor,
        limit=SCALE_LIMITS[3],
        now=timezone.now(),
    )
    return {item.candidate.id for item in picked}


def original_injection(query: np.ndarray) -> list[int]:
    """The original design: the first 500 rows, cosine in the application, similarity order,
    threshold (or floor), limit."""
    threshold, floor, limit = settings.THINK_INJECT_T3, settings.THINK_INJECT_FLOOR, 20
    rows = list(
        Entity.objects.filter(embedding_dim=DIM).values_list("id", "embedding")[:ORIGINAL_POOL]
    )
    ids = np.array([pk for pk, _ in rows])
    matrix = np.vstack([v for _, v in rows]).astype(np.float32)
    sims = (matrix @ query) / (np.linalg.norm(matrix, axis=1) * np.linalg.norm(query))
    order = np.argsort(-sims)
    chosen = [i for i in order if sims[i] >= threshold][:limit]
    if not chosen:
        chosen = [i for i in order if sims[i] >= floor][:limit]
    return ids[chosen].tolist()


def exact_similarity_order(matrix: np.ndarray, pks: np.ndarray, query: np.ndarray) -> set[int]:
    """The original's rules over the whole graph: the reference for the baseline's recall."""
    threshold, floor = settings.THINK_INJECT_T3, settings.THINK_INJECT_FLOOR
    sims = matrix @ query
    order = np.argsort(-sims)[:200]
    chosen = [i for i in order if sims[i] >= threshold][:20]
    if not chosen:
        chosen = [i for i in order if sims[i] >= floor][:20]
    return {int(pks[i]) for i in chosen}


def our_injection_step(query: np.ndarray) -> list[int]:
    from thoughts.think.injection import memories_inject

    result = memories_inject(
        provider=get_provider(),
        vector=query,
        scale=3,
        mode=HINT,
        submode=None,
        viewer=AnonymousUser(),
    )
    return [item.candidate.id for item in result.memories]


def recall(found: set[int], truth: set[int]) -> float | None:
    return len(found & truth) / len(truth) if truth else None
