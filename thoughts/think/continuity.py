"""Continuity links (specs/002 "Continuity Link Resolution").

Each of previous_thought_id, revises_thought and branch_from resolves to:

- ``record``: the thought exists and belongs to the writer;
- ``string``: a well-formed id of no thought the writer can see, kept so it resolves once a
  thought with that id is written (another user's thought counts as unseen: ids of thoughts
  that are not yours are never confirmed);
- ``dropped_self_link``: the id is the new thought's own;
- ``dropped_duplicate``: the id already appeared in an earlier link field.

Formats are checked in ``params`` (a malformed id is a 400 before anything is embedded).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import User

from thoughts.models import Thought
from thoughts.think.params import LINK_FIELDS


def thought_ref(thought_id: uuid.UUID | None) -> str | None:
    return f"thoughts:{thought_id}" if thought_id else None


@dataclass
class Continuity:
    session_id: str | None
    chain_id: str | None
    confidence: float | None
    links: dict[str, uuid.UUID | None] = field(default_factory=dict)
    statuses: dict[str, str] = field(default_factory=dict)

    def as_links(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "chain_id": self.chain_id,
            **{name: thought_ref(self.links.get(name)) for name in LINK_FIELDS},
            "confidence": self.confidence,
        }


def continuity_resolve(
    *,
    owner: User,
    thought_id: uuid.UUID,
    links: dict[str, uuid.UUID | None],
    session_id: str | None,
    chain_id: str | None,
    confidence: float | None,
) -> Continuity:
    given = [link for link in links.values() if link is not None]
    existing = (
        set(Thought.objects.filter(owner=owner, id__in=given).values_list("id", flat=True))
        if given
        else set()
    )
    result = Continuity(session_id, chain_id, confidence)
    seen: set[uuid.UUID] = set()
    for name in LINK_FIELDS:
        link = links.get(name)
        result.links[name] = None
        if link is None:
            continue
        if link == thought_id:
            result.statuses[name] = "dropped_self_link"
        elif link in seen:
            result.statuses[name] = "dropped_duplicate"
        else:
            seen.add(link)
            result.links[name] = link
            result.statuses[name] = "record" if link in existing else "string"
    return result
