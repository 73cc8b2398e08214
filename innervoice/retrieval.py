"""Inner-voice retrieval (specs/README.md, "Inner voice retrieval"): the snippets a synthesis
may use, drawn from the caller's thoughts and the KG entities and observations they may see.

Each source gives its 3 x top_k nearest rows of the query's dimension and model; rows above the
floor are kept (the floor drops by 0.05, never below 0.15, while fewer than top_k pass); the KG
gets round(mix x top_k) slots with at least one per source that has a row; near-duplicates are
dropped; each snippet is cut to 800 characters; at most 6 are cited.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from kg.selectors import MemoryHit, memories_nearest
from legacymind.users import Viewer
from legacymind.vectors.search import nearest_or_exact
from thoughts.models import Thought
from thoughts.selectors import thoughts_visible_to

SNIPPET_MAX = 800
CITE_MAX = 6
FLOOR_MIN = 0.15
FLOOR_STEP = 0.05
DUPLICATE_JACCARD = 0.9
PREFIX = {"thought": "thoughts", "entity": "kge", "observation": "kgo"}
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Snippet:
    kind: str  # thought | entity | observation
    id: Any
    text: str
    similarity: float
    private: bool

    @property
    def ref(self) -> str:
        return f"{PREFIX[self.kind]}:{self.id}"


@dataclass(frozen=True)
class Selection:
    snippets: list[Snippet]
    floor: float  # the floor the kept rows passed (after any lowering)

    @property
    def sources_compact(self) -> str:
        return ", ".join(s.ref for s in self.snippets[:CITE_MAX])

    @property
    def thought_ids(self) -> list[str]:
        return [str(s.id) for s in self.snippets if s.kind == "thought"]

    @property
    def memory_refs(self) -> list[str]:
        return [s.ref for s in self.snippets if s.kind != "thought"]

    @property
    def private(self) -> bool:
        return any(s.private for s in self.snippets)


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SNIPPET_MAX else text[: SNIPPET_MAX - 1].rstrip() + "…"


def _candidates(
    *,
    user: Viewer,
    vector: list[float],
    model: str,
    k: int,
    include_private: bool,
    include_tags: list[str],
    exclude_tags: list[str],
) -> dict[str, list[Snippet]]:
    # Follow-up questions the inner voice asked are not material to answer from.
    thoughts = (
        thoughts_visible_to(user)
        .exclude(origin=Thought.Origin.INNER_VOICE_FEEDBACK)
        .defer("embedding")
    )
    if not include_private:
        thoughts = thoughts.filter(is_private=False)
    if include_tags:
        thoughts = thoughts.filter(tags__overlap=include_tags)
    if exclude_tags:
        thoughts = thoughts.exclude(tags__overlap=exclude_tags)
    found: dict[str, list[Snippet]] = {
        "thought": [
            Snippet("thought", row.id, _cut(row.content), float(row.similarity), row.is_private)
            for row in nearest_or_exact(thoughts, vector, model, k)
        ]
    }
    memories = memories_nearest(user, vector, model=model, k=k, own_private=include_private)
    for kind in ("entity", "observation"):
        found[kind] = [
            Snippet(kind, hit.id, _cut(_memory_text(hit)), hit.similarity, hit.private)
            for hit in memories.hits
            if hit.kind == kind
        ]
    return found


def _memory_text(hit: MemoryHit) -> str:
    if hit.kind == "entity":
        head = f"{hit.name} ({hit.label})"
        return f"{head}: {hit.description}" if hit.description else head
    return f"{hit.name} - {hit.description}" if hit.description else hit.name


def _passing(
    found: dict[str, list[Snippet]], floor: float, top_k: int
) -> tuple[float, dict[str, list[Snippet]]]:
    """The rows at or above the floor, lowering it while fewer than top_k pass."""
    while True:
        kept = {kind: [s for s in rows if s.similarity >= floor] for kind, rows in found.items()}
        if sum(map(len, kept.values())) >= top_k or floor <= FLOOR_MIN:
            return floor, kept
        floor = max(FLOOR_MIN, round(floor - FLOOR_STEP, 6))


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def _dedupe(rows: list[Snippet]) -> list[Snippet]:
    """Drop a snippet whose words are (almost) those of a better one already kept."""
    kept: list[tuple[Snippet, set[str]]] = []
    for row in sorted(rows, key=lambda s: -s.similarity):
        words = _words(row.text)
        if any(_jaccard(words, other) >= DUPLICATE_JACCARD for _, other in kept):
            continue
        kept.append((row, words))
    return [row for row, _ in kept]


def _jaccard(a: set[str], b: set[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def _allocate(kept: dict[str, list[Snippet]], top_k: int, mix: float) -> list[Snippet]:
    kg_slots = min(top_k, math.floor(mix * top_k + 0.5))
    thought_slots = top_k - kg_slots
    chosen: list[Snippet] = []
    # One per source that has a row, best first, as long as there are slots.
    for kind in ("thought", "entity", "observation"):
        if kept[kind] and len(chosen) < top_k:
            chosen.append(kept[kind][0])
    taken = {(s.kind, s.id) for s in chosen}
    kg_rest = sorted(
        [s for kind in ("entity", "observation") for s in kept[kind] if (kind, s.id) not in taken],
        key=lambda s: -s.similarity,
    )
    thought_rest = [s for s in kept["thought"] if ("thought", s.id) not in taken]
    kg_have = sum(1 for s in chosen if s.kind != "thought")
    thought_have = len(chosen) - kg_have
    kg_take = kg_rest[: max(0, kg_slots - kg_have)]
    thought_take = thought_rest[: max(0, thought_slots - thought_have)]
    chosen += kg_take + thought_take
    # A side without enough rows leaves its slots to the other.
    spare = top_k - len(chosen)
    if spare > 0:
        chosen += (kg_rest[len(kg_take) :] + thought_rest[len(thought_take) :])[:spare]
    return sorted(chosen[:top_k], key=lambda s: -s.similarity)


def snippets_select(
    *,
    user: Viewer,
    vector: list[float],
    model: str,
    top_k: int,
    floor: float,
    mix: float,
    include_private: bool,
    include_tags: list[str],
    exclude_tags: list[str],
) -> Selection:
    """The snippets for a synthesis, best first. Another user's thoughts never appear, nor
    memories drawn from their private thoughts; the caller's own private thoughts (and memories
    drawn from them) only with ``include_private``."""
    found = _candidates(
        user=user,
        vector=vector,
        model=model,
        k=3 * top_k,
        include_private=include_private,
        include_tags=include_tags,
        exclude_tags=exclude_tags,
    )
    used_floor, kept = _passing(found, floor, top_k)
    kept = {kind: _dedupe(rows) for kind, rows in kept.items()}
    # Across sources too: an observation that repeats a thought word for word adds nothing.
    survivors = {(s.kind, s.id) for s in _dedupe([s for rows in kept.values() for s in rows])}
    kept = {kind: [s for s in rows if (s.kind, s.id) in survivors] for kind, rows in kept.items()}
    return Selection(_allocate(kept, top_k, mix), used_floor)
