"""Reads of single thoughts and lists: filters, a thought's links and its injected memories."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.core.exceptions import ValidationError
from django.db.models import QuerySet

from kg.selectors import Memory, memories_by_id
from legacymind.errors import NotFound
from legacymind.users import Viewer
from thoughts.models import Thought
from thoughts.refs import parse_thought_ref
from thoughts.selectors.visibility import thoughts_visible_to

LINK_FIELDS = ("previous_thought", "revises_thought", "branch_from")


@dataclass(frozen=True)
class ThoughtFilters:
    """The filters of the thought list and of search (``legacymind_search``'s names).

    ``created_gte`` / ``created_lte`` are inclusive bounds; the API turns a date into its whole
    day. Confidence bounds only match thoughts that have a confidence.
    """

    session_id: str | None = None
    chain_id: str | None = None
    previous_thought_id: uuid.UUID | None = None
    revises_thought: uuid.UUID | None = None
    branch_from: uuid.UUID | None = None
    origin: str | None = None
    mode: str | None = None
    tags: tuple[str, ...] = ()
    tags_match: str = "any"
    created_gte: datetime | None = None
    created_lte: datetime | None = None
    confidence_gte: float | None = None
    confidence_lte: float | None = None


def thoughts_filter(queryset: QuerySet[Thought], filters: ThoughtFilters) -> QuerySet[Thought]:
    f = filters
    exact = {
        "session_id": f.session_id,
        "chain_id": f.chain_id,
        "previous_thought_id": f.previous_thought_id,
        "revises_thought_id": f.revises_thought,
        "branch_from_id": f.branch_from,
        "origin": f.origin,
        "mode": f.mode,
        "created_at__gte": f.created_gte,
        "created_at__lte": f.created_lte,
        "confidence__gte": f.confidence_gte,
        "confidence__lte": f.confidence_lte,
    }
    queryset = queryset.filter(**{k: v for k, v in exact.items() if v is not None})
    if f.tags:
        lookup = "tags__contains" if f.tags_match == "all" else "tags__overlap"
        queryset = queryset.filter(**{lookup: list(f.tags)})
    return queryset


def thoughts_list(*, user: Viewer, filters: ThoughtFilters) -> QuerySet[Thought]:
    """The user's thoughts, newest first, without the vectors a list never shows."""
    visible = thoughts_visible_to(user).defer("embedding")
    return thoughts_filter(visible, filters).order_by("-created_at", "-id")


def thought_get(*, user: Viewer, thought_id: uuid.UUID | str) -> Thought:
    """``thought_id`` as every endpoint takes it: ``<uuid>`` or ``thoughts:<uuid>`` (the form
    think answers with, so a client can open what it was just given)."""
    try:
        pk = parse_thought_ref(thought_id) if isinstance(thought_id, str) else thought_id
        return thoughts_visible_to(user).defer("embedding").get(pk=pk)
    except (Thought.DoesNotExist, ValueError, ValidationError) as exc:  # a malformed id too
        raise NotFound("No such thought.") from exc


# --- continuity links and injected memories of one thought ----------------------------------
@dataclass(frozen=True)
class Link:
    id: uuid.UUID
    # "record": a thought this viewer can open. "string": kept but unresolved, because no such
    # thought exists yet, or because it is someone else's (which must read the same).
    status: str


def thought_links(*, user: Viewer, thought: Thought) -> dict[str, Link | None]:
    ids = {name: getattr(thought, f"{name}_id") for name in LINK_FIELDS}
    wanted = {value for value in ids.values() if value is not None}
    found = set(thoughts_visible_to(user).filter(pk__in=wanted).values_list("pk", flat=True))
    return {
        name: None if value is None else Link(value, "record" if value in found else "string")
        for name, value in ids.items()
    }


_KIND_ALIASES = {
    "entity": "entity",
    "kge": "entity",
    "kg_entities": "entity",
    "observation": "observation",
    "kgo": "observation",
    "kg_observations": "observation",
}


def _memory_ref(item: Any) -> tuple[str | None, int | None, dict[str, Any]]:
    """(kind, id, extra) of one stored injected memory: ``{"id", "kind", ...}`` or the
    original's string ids (``kg_entities:12``, ``kge:12``)."""
    extra: dict[str, Any] = {}
    if isinstance(item, dict):
        extra = {k: v for k, v in item.items() if k not in ("id", "kind")}
        raw_kind, raw_id = item.get("kind"), item.get("id")
    elif isinstance(item, str) and ":" in item:
        raw_kind, raw_id = item.split(":", 1)
    else:
        return None, None, extra
    kind = _KIND_ALIASES.get(str(raw_kind))
    if isinstance(raw_id, str) and ":" in raw_id:  # {"id": "kge:12"}
        prefix, raw_id = raw_id.split(":", 1)
        kind = kind or _KIND_ALIASES.get(prefix)
    try:
        return kind, int(str(raw_id)), extra
    except ValueError:
        return kind, None, extra


@dataclass(frozen=True)
class InjectedMemory:
    kind: str | None
    id: int | None
    row: Memory | None  # None: deleted since, or not visible to this viewer
    extra: dict[str, Any] = field(default_factory=dict)


def injected_memories(*, user: Viewer, thought: Thought) -> list[InjectedMemory]:
    """The memories injected into ``thought``, in stored order, joined to their current rows."""
    refs = [_memory_ref(item) for item in thought.injected_memories or []]
    wanted: dict[str, set[int]] = {"entity": set(), "observation": set()}
    for kind, pk, _ in refs:
        if kind in wanted and pk is not None:
            wanted[kind].add(pk)
    rows = memories_by_id(user, entity_ids=wanted["entity"], observation_ids=wanted["observation"])
    return [
        InjectedMemory(kind, pk, rows.get((kind, pk)) if kind and pk else None, extra)
        for kind, pk, extra in refs
    ]


# --- the chain as a tree ----------------------------------------------------------------------
