"""Demo data for ``make run``: ``demo_seed``.

It is idempotent. Demo rows have fixed identities (uuid5 thought ids, the entity and edge
upsert keys, candidates by name/triple with ``origin="demo"``), so a second run finds every row
and creates nothing; rows a person changed since (a moderated candidate, an edited entity) are
left as they are.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction

from kg.models import CandidateStatus, Edge, EdgeCandidate, Entity, EntityCandidate, Observation
from legacymind.providers.embeddings import EmbeddingProvider, fields_for, get_provider
from thoughts.models import Thought

DEMO_USERNAME = "demo"
DEMO_ORIGIN = "demo"
# Fixed namespace: the same key gives the same thought id in every database.
DEMO_NAMESPACE = uuid.UUID("6f1d3c2a-58b4-4f0e-9a51-2f6d0c9e7b31")
EMBEDDED_FIELDS = [
    "embedding",
    "embedding_provider",
    "embedding_model",
    "embedding_dim",
    "embedded_at",
]


@dataclass(frozen=True)
class DemoThought:
    key: str
    content: str
    session: str
    chain: str
    mode: str
    tags: tuple[str, ...] = ()
    origin: str = "human"
    previous: str | None = None
    revises: str | None = None
    branch: str | None = None
    significance: float = 0.5


# Three chains. The checkout chain has a revision and a branch, so every continuity link the
# thoughts API and admin show has an example.
THOUGHTS: tuple[DemoThought, ...] = (
    DemoThought(
        "checkout-1",
        "Checkout latency jumped to 2 seconds after the deploy; the cart service waits on the "
        "session store for every request.",
        "demo-session-1",
        "demo-chain-checkout",
        "debug",
        ("debug",),
        significance=0.7,
    ),
    DemoThought(
        "checkout-2",
        "Hypothesis: the session store lost its connection pool, so every call opens a new "
        "TCP connection.",
        "demo-session-1",
        "demo-chain-checkout",
        "debug",
        ("debug",),
        previous="checkout-1",
    ),
    DemoThought(
        "checkout-3",
        "Revised: the pool is fine; the new serializer makes each session payload ten times "
        "larger, and the store is bandwidth-bound.",
        "demo-session-1",
        "demo-chain-checkout",
        "debug",
        ("debug", "dx"),
        previous="checkout-2",
        revises="checkout-2",
        significance=0.8,
    ),
    DemoThought(
        "checkout-4",
        "Branch: what if the cart service cached the session for the length of one request?",
        "demo-session-1",
        "demo-chain-checkout",
        "build",
        ("idea",),
        branch="checkout-2",
    ),
    DemoThought(
        "checkout-5",
        "Conclusion: pin the old serializer and add a payload size budget to CI.",
        "demo-session-1",
        "demo-chain-checkout",
        "conclude",
        ("plan",),
        previous="checkout-3",
        significance=0.9,
    ),
    DemoThought(
        "photo-1",
        "Plan a sunrise shoot at the lake: golden hour starts at 6:10, bring the 24-70 lens.",
        "demo-session-2",
        "demo-chain-photography",
        "plan",
        ("photography", "plan"),
    ),
    DemoThought(
        "photo-2",
        "Question: is a polariser worth it for reflections on still water at sunrise?",
        "demo-session-2",
        "demo-chain-photography",
        "question",
        ("photography",),
        previous="photo-1",
    ),
    DemoThought(
        "journal-1",
        "I keep saying yes to every meeting and then resent the lost afternoons.",
        "demo-session-3",
        "demo-chain-journal",
        "stuck",
        (),
        origin="journal",
    ),
    DemoThought(
        "journal-2",
        "Maybe the yes is about wanting to be seen as reliable, not about the meetings.",
        "demo-session-3",
        "demo-chain-journal",
        "question",
        ("idea",),
        origin="journal",
        previous="journal-1",
    ),
)

# (name, entity_type, description)
ENTITIES: tuple[tuple[str, str, str], ...] = (
    ("cart-service", "service", "Builds the cart and talks to the session store."),
    ("session-store", "service", "Key-value store holding user sessions."),
    ("serializer", "library", "Encodes session payloads."),
    ("lake sunrise shoot", "project", "A photography outing at golden hour."),
    ("polariser", "tool", "A filter that cuts reflections."),
)
# (source, rel_type, target)
EDGES: tuple[tuple[str, str, str], ...] = (
    ("cart-service", "depends_on", "session-store"),
    ("session-store", "uses", "serializer"),
    ("lake sunrise shoot", "needs", "polariser"),
)
# (name, entity name, source thought key)
OBSERVATIONS: tuple[tuple[str, str, str], ...] = (
    ("session payloads grew tenfold", "serializer", "checkout-3"),
    ("checkout latency 2s after deploy", "cart-service", "checkout-1"),
    ("golden hour starts at 6:10", "lake sunrise shoot", "photo-1"),
)
# Pending candidates for the moderation queue: (name, entity_type, confidence, thought key).
ENTITY_CANDIDATES: tuple[tuple[str, str, float, str], ...] = (
    ("payload size budget", "practice", 0.82, "checkout-5"),
    ("connection pool", "concept", 0.55, "checkout-2"),
    ("reliability", "value", 0.64, "journal-2"),
)
# (source, rel_type, target, confidence, thought key)
EDGE_CANDIDATES: tuple[tuple[str, str, str, float, str], ...] = (
    ("cart-service", "caches", "session-store", 0.6, "checkout-4"),
    ("CI", "enforces", "payload size budget", 0.75, "checkout-5"),
)


@dataclass(frozen=True)
class DemoSummary:
    user: str
    provider: str
    model: str
    dim: int
    created: dict[str, int]
    totals: dict[str, int]
    embedded: int


def demo_thought_id(key: str) -> uuid.UUID:
    return uuid.uuid5(DEMO_NAMESPACE, f"thought:{key}")


def _embed_missing(
    provider: EmbeddingProvider, rows: Sequence[Any], texts: Sequence[str], model: type[Any]
) -> int:
    """Embed rows that have no vector or one from another model (a changed EMBEDDING_PROVIDER
    would otherwise leave the demo unsearchable: search compares same-model vectors only)."""
    todo = [
        (row, text)
        for row, text in zip(rows, texts, strict=True)
        if row.embedding is None or row.embedding_model != provider.model
    ]
    if not todo:
        return 0
    matrix = provider.embed([text for _, text in todo])
    for (row, _), vector in zip(todo, matrix, strict=True):
        for key, value in fields_for(provider, vector).items():
            setattr(row, key, value)
    model.objects.bulk_update([row for row, _ in todo], EMBEDDED_FIELDS)
    return len(todo)


def _seed_thoughts(owner: User) -> tuple[list[Thought], int]:
    made = 0
    rows = []
    # In order: links point at thoughts written earlier, and created_at orders each chain.
    for spec in THOUGHTS:
        thought, created = Thought.objects.get_or_create(
            id=demo_thought_id(spec.key),
            defaults={
                "owner": owner,
                "content": spec.content,
                "mode": spec.mode,
                "tags": list(spec.tags),
                "origin": spec.origin,
                "session_id": spec.session,
                "chain_id": spec.chain,
                "significance": spec.significance,
                "previous_thought_id": spec.previous and demo_thought_id(spec.previous),
                "revises_thought_id": spec.revises and demo_thought_id(spec.revises),
                "branch_from_id": spec.branch and demo_thought_id(spec.branch),
            },
        )
        made += created
        rows.append(thought)
    return rows, made


def _seed_graph() -> tuple[list[Entity], list[Observation], dict[str, int]]:
    made = {"entities": 0, "observations": 0, "edges": 0}
    by_name: dict[str, Entity] = {}
    for name, entity_type, description in ENTITIES:
        entity = Entity.objects.filter(name__iexact=name, entity_type__iexact=entity_type).first()
        if entity is None:
            entity = Entity.objects.create(
                name=name,
                entity_type=entity_type,
                description=description,
                data={"origin": DEMO_ORIGIN},
            )
            made["entities"] += 1
        by_name[name] = entity
    for source, rel_type, target in EDGES:
        _, created = Edge.objects.get_or_create(
            source=by_name[source],
            target=by_name[target],
            rel_type=rel_type,
            defaults={"data": {"origin": DEMO_ORIGIN}},
        )
        made["edges"] += created
    observations = []
    for name, entity_name, thought_key in OBSERVATIONS:
        obs, created = Observation.objects.get_or_create(
            name=name,
            source_thought_id=demo_thought_id(thought_key),
            defaults={"entity": by_name[entity_name], "data": {"origin": DEMO_ORIGIN}},
        )
        made["observations"] += created
        observations.append(obs)
    return list(by_name.values()), observations, made


def _pending(confidence: float, key: str) -> dict[str, Any]:
    """What a new demo candidate starts with: pending, staged by the demo thought ``key``."""
    return {
        "confidence": confidence,
        "status": CandidateStatus.PENDING,
        "staged_by_thought_id": demo_thought_id(key),
        "provider": "demo",
    }


def _seed_candidates() -> dict[str, int]:
    made = {"entity_candidates": 0, "edge_candidates": 0}
    # Looked up whatever their status: a demo candidate a moderator decided stays decided.
    for name, entity_type, confidence, key in ENTITY_CANDIDATES:
        _, created = EntityCandidate.objects.get_or_create(
            name=name,
            entity_type=entity_type,
            origin=DEMO_ORIGIN,
            defaults=_pending(confidence, key),
        )
        made["entity_candidates"] += created
    for source, rel_type, target, confidence, key in EDGE_CANDIDATES:
        _, created = EdgeCandidate.objects.get_or_create(
            source_name=source,
            target_name=target,
            rel_type=rel_type,
            origin=DEMO_ORIGIN,
            defaults=_pending(confidence, key),
        )
        made["edge_candidates"] += created
    return made


def demo_seed() -> DemoSummary:
    """Create the demo user, thought chains, a small graph and pending candidates, once."""
    provider = get_provider()  # resolved first: a misconfigured provider fails before any write
    with transaction.atomic():
        user, user_created = get_user_model().objects.get_or_create(username=DEMO_USERNAME)
        if user_created:
            user.set_unusable_password()
            user.save(update_fields=["password"])
        thoughts, thoughts_made = _seed_thoughts(user)
        entities, observations, graph_made = _seed_graph()
        candidates_made = _seed_candidates()
        embedded = _embed_missing(provider, thoughts, [t.content for t in thoughts], Thought)
        embedded += _embed_missing(
            provider, entities, [e.embedding_text() for e in entities], Entity
        )
        embedded += _embed_missing(
            provider, observations, [o.embedding_text() for o in observations], Observation
        )
    totals: dict[str, int] = {
        "thoughts": Thought.objects.filter(owner=user).count(),
        "entities": Entity.objects.count(),
        "observations": Observation.objects.count(),
        "edges": Edge.objects.count(),
        "pending_entity_candidates": EntityCandidate.objects.filter(
            status=CandidateStatus.PENDING
        ).count(),
        "pending_edge_candidates": EdgeCandidate.objects.filter(
            status=CandidateStatus.PENDING
        ).count(),
    }
    created = {"users": int(user_created), "thoughts": thoughts_made, **graph_made}
    created.update(candidates_made)
    return DemoSummary(
        user=user.get_username(),
        provider=provider.name,
        model=provider.model,
        dim=provider.dim,
        created=created,
        totals=totals,
        embedded=embedded,
    )
