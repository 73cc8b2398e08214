"""Who may see which thought: one rule, applied by every read of the thoughts app, and the one
selector of this app the KG's API uses (to accept a source thought, and to name it).

A user sees their own thoughts and nobody else's. Private thoughts are therefore never shown to
anyone but their owner, and a thought of another user reads exactly like one that does not
exist (the API answers 404, not 403).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from django.db.models import QuerySet

from legacymind.users import Viewer
from thoughts.models import Thought


def thoughts_visible_to(user: Viewer) -> QuerySet[Thought]:
    """The thoughts ``user`` may read: their own, private or not."""
    if not user.is_authenticated:
        return Thought.objects.none()
    return Thought.objects.filter(owner_id=user.pk)


def own_thought_ids(user: Viewer, ids: Iterable[uuid.UUID | None]) -> set[uuid.UUID]:
    """Those of ``ids`` that are ``user``'s thoughts, in one query. A memory shows the thought it
    was drawn from only to that thought's owner: to anyone else the id names a thought they
    cannot open, and says that it exists."""
    wanted = {i for i in ids if i is not None}
    if not wanted:
        return set()
    return set(thoughts_visible_to(user).filter(pk__in=wanted).values_list("pk", flat=True))
