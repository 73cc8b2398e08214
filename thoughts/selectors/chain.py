"""A thought's chain as a tree: predecessors, successors, revisions and branches."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from django.db.models import Q, QuerySet
from django.db.models.functions import Left

from legacymind.users import Viewer
from thoughts.models import Thought
from thoughts.selectors.visibility import thoughts_visible_to

CHAIN_MAX_DEPTH = 50
CHAIN_MAX_NODES = 500
CHAIN_PREVIEW_CHARS = 280


@dataclass
class ChainNode:
    thought: Thought
    relation: str  # root | successor | revision | branch
    is_focus: bool = False
    successors: list[ChainNode] = field(default_factory=list)
    revisions: list[ChainNode] = field(default_factory=list)
    branches: list[ChainNode] = field(default_factory=list)


@dataclass(frozen=True)
class Chain:
    root: ChainNode
    focus_id: uuid.UUID
    ancestors: int  # levels above the focus
    truncated: bool  # the depth or node limit cut something off


# A thought hangs under the first link it has, in this order: a successor under its
# predecessor, a revision under what it revises, a branch under its branching point.
_RELATIONS = (
    ("previous_thought_id", "successor", "successors"),
    ("revises_thought_id", "revision", "revisions"),
    ("branch_from_id", "branch", "branches"),
)


_CHAIN_FIELDS = [
    "id",
    "created_at",
    "mode",
    "origin",
    "is_private",
    "confidence",
    "session_id",
    "chain_id",
]


def _chain_rows(user: Viewer) -> QuerySet[Thought]:
    # A tree of hundreds of thoughts must not load their full text or vectors.
    return (
        thoughts_visible_to(user)
        .annotate(preview=Left("content", CHAIN_PREVIEW_CHARS + 1))
        .only(*_CHAIN_FIELDS, *(name for name, _, _ in _RELATIONS))
        .order_by("created_at", "id")
    )


def _visible_parent(rows: QuerySet[Thought], row: Thought) -> Thought | None:
    """The first of ``row``'s links, in ``_RELATIONS`` order, that the viewer can see."""
    ids = [getattr(row, name) for name, _, _ in _RELATIONS if getattr(row, name) is not None]
    if not ids:
        return None
    found = {parent.pk: parent for parent in rows.filter(pk__in=ids)}
    return next((found[pk] for pk in ids if pk in found), None)


def _links_into(frontier: dict[uuid.UUID, ChainNode]) -> Q:
    query = Q()
    for name, _, _ in _RELATIONS:
        query |= Q(**{f"{name}__in": list(frontier)})
    return query


def thought_chain(*, user: Viewer, thought: Thought, depth: int = 10) -> Chain:
    """The tree around ``thought``: up to ``depth`` ancestors, and below the topmost one every
    successor, revision and branch down to ``depth`` levels under the focus. Only the viewer's
    thoughts appear: a link to anything else is where the walk ends. A thought with several
    links appears once, under the nearest. At most ``CHAIN_MAX_NODES`` nodes."""
    depth = max(1, min(depth, CHAIN_MAX_DEPTH))
    rows = _chain_rows(user)
    focus = rows.get(pk=thought.pk)
    top, seen, truncated, ancestors = focus, {focus.pk}, False, 0
    while (parent := _visible_parent(rows, top)) is not None and parent.pk not in seen:
        if ancestors == depth:
            truncated = True
            break
        top, ancestors = parent, ancestors + 1
        seen.add(parent.pk)

    root = ChainNode(top, "root", is_focus=top.pk == focus.pk)
    frontier = {root.thought.pk: root}
    seen = {top.pk}
    for _ in range(ancestors + depth):
        nxt: dict[uuid.UUID, ChainNode] = {}
        full = False
        for row in rows.filter(_links_into(frontier)).exclude(pk__in=seen):
            if full := len(seen) >= CHAIN_MAX_NODES:
                break
            for name, relation, bucket in _RELATIONS:
                parent_node = frontier.get(getattr(row, name))
                if parent_node is not None:
                    node = ChainNode(row, relation, is_focus=row.pk == focus.pk)
                    getattr(parent_node, bucket).append(node)
                    nxt[row.pk] = node
                    seen.add(row.pk)
                    break
        if full:
            truncated = True
            break
        if not nxt:
            break
        frontier = nxt
    else:
        below = rows.filter(_links_into(frontier)).exclude(pk__in=seen)
        truncated = truncated or below.exists()
    return Chain(root=root, focus_id=focus.pk, ancestors=ancestors, truncated=truncated)


# --- search (legacymind_search) -------------------------------------------------------------
