"""What the nearest-memory search returns: one hit per entity or observation it found, as the
search's own query read it (no second query loads the rows)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from kg.models import Entity, Observation
from legacymind.users import Viewer, viewer_id

KINDS: dict[str, type[Entity] | type[Observation]] = {"entity": Entity, "observation": Observation}
REF_PREFIX = {"entity": "kge", "observation": "kgo"}


@dataclass(frozen=True)
class MemoryHit:
    """One entity or observation near the query, as the search read it."""

    kind: str  # entity | observation
    id: int
    similarity: float
    name: str
    label: str  # entity_type for entities, description for observations
    description: str
    significance: float
    access_count: int
    used: float  # epoch seconds of the last use, or of the creation when never used
    created: float  # epoch seconds
    source_thought_id: Any
    source_private: bool | None
    source_owner_id: int | None

    @property
    def ref(self) -> str:
        return f"{REF_PREFIX[self.kind]}:{self.id}"

    @property
    def entity_type(self) -> str | None:
        return self.label if self.kind == "entity" else None

    @property
    def text(self) -> str:
        """What the row embeds as ("name (type)" or "name - description"), an entity's
        description after it."""
        if self.kind == "entity":
            text = Entity.text_of(self.name, self.label)
            return f"{text} {self.description}" if self.description else text
        return Observation.text_of(self.name, self.description)

    @property
    def last_used(self) -> datetime:
        return datetime.fromtimestamp(self.used, UTC)

    @property
    def created_at(self) -> datetime:
        return datetime.fromtimestamp(self.created, UTC)

    @property
    def private(self) -> bool:
        """Drawn from a private thought (which, being visible, is the viewer's own)."""
        return bool(self.source_private)

    def source_for(self, viewer: Viewer) -> Any:
        """The thought this was drawn from, named to that thought's owner only: to anyone else
        the id names a thought they cannot open, and says that it exists."""
        owner = viewer_id(viewer)
        return (
            self.source_thought_id if owner is not None and owner == self.source_owner_id else None
        )


@dataclass
class Nearest:
    hits: list[MemoryHit]
    # Ids of KG rows without a vector, by kind, when the search was asked to probe for them.
    unembedded: dict[str, list[int]]


def hit_from_row(kind: str, row: Any) -> MemoryHit:
    """A hit from an ORM row with ``similarity``, ``source_private`` and ``source_owner``
    (a subset ranked exactly)."""
    used = row.last_accessed or row.created_at
    return MemoryHit(
        kind=kind,
        id=row.pk,
        similarity=float(row.similarity),
        name=row.name,
        label=row.entity_type if kind == "entity" else row.description,
        description=row.description,
        significance=row.significance,
        access_count=row.access_count,
        used=used.timestamp(),
        created=row.created_at.timestamp(),
        source_thought_id=row.source_thought_id,
        source_private=row.source_private,
        source_owner_id=row.source_owner,
    )
