"""The one write of a thought (``thought_create``) and its delete.

The write is one INSERT: the row with its embedding, injected memories and analysis. After it
commits, the access bump of the memories it used (batched, ``kg.services.touches``) and the KG
extraction are queued. The bump runs after commit, not inside the write: access counts are
statistics, a late bump loses nothing, and the thought's transaction never waits on row locks
of popular memories. The KG tables keep half of each page free (kg migrations 0003, 0004) so
the bump is a HOT update that never touches the HNSW index.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from contextlib import nullcontext
from typing import Any

import numpy as np
from django.contrib.auth.models import User
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from kg.services import touch_later
from legacymind.celery import publish_on_commit
from legacymind.errors import NotFound
from legacymind.providers.embeddings import EmbeddingProvider, fields_for, get_provider
from thoughts.models import Thought
from thoughts.services.extract import thought_extract_on_commit
from thoughts.think.injection import Injected
from thoughts.think.persist import thought_id_taken


def thought_create(
    *,
    owner: User,
    content: str,
    origin: str,
    embedding: tuple[EmbeddingProvider, np.ndarray] | None = None,
    injected: Sequence[Injected] = (),
    extract: bool = True,
    **fields: Any,
) -> Thought:
    """Store a thought: the only way a ``Thought`` row is made.

    ``embedding`` is the (provider, vector) of ``content`` when the caller has it already (the
    think pipeline, the inner voice embed in one batch); otherwise the content is embedded here,
    and an embedding failure raises (503) before anything is written. ``fields`` are the row's
    other columns (mode, tags, links, ...). The memories ``injected`` get their access bump,
    and (``extract``) the thought its KG extraction, once the write commits. An id that exists
    already is a 409."""
    provider, vector = embedding or _embedded(content)
    thought = Thought(owner=owner, content=content, origin=origin, **fields)
    for key, value in fields_for(provider, vector).items():
        setattr(thought, key, value)
    return _insert(thought=thought, injected=list(injected), extract=extract)


def _embedded(content: str) -> tuple[EmbeddingProvider, np.ndarray]:
    provider = get_provider()
    return provider, provider.embed([content])[0]


def _touch_on_commit(injected: list[Injected]) -> None:
    ids: dict[str, list[int]] = {"entity": [], "observation": []}
    for item in injected:
        ids[item.candidate.kind].append(item.candidate.id)
    at = timezone.now()
    publish_on_commit(
        lambda: touch_later(entity_ids=ids["entity"], observation_ids=ids["observation"], at=at)
    )


def _insert(*, thought: Thought, injected: list[Injected], extract: bool = True) -> Thought:
    """Insert ``thought`` (never update: an existing id is a 409), then queue what follows it
    once it is committed.

    The write is the one INSERT. Outside a transaction (a think request) it commits by itself,
    as atomic as the row is whole: an atomic block around it only cost every think a BEGIN
    and a COMMIT, two more round trips. Inside the caller's transaction (the inner voice's
    two linked thoughts) a savepoint keeps that transaction usable after a duplicate id."""
    try:
        with transaction.atomic() if connection.in_atomic_block else nullcontext():
            thought.save(force_insert=True)
    except IntegrityError as exc:
        if Thought.objects.filter(id=thought.id).exists():
            raise thought_id_taken(thought.id) from exc
        raise
    if injected:
        _touch_on_commit(injected)
    if extract:
        thought_extract_on_commit(thought_id=thought.id, origin=None)
    return thought


def thought_delete(*, user: User, thought_id: uuid.UUID | str) -> None:
    """Delete one of ``user``'s thoughts; another user's reads as missing (NotFound, a 404).

    What goes with it is what its foreign keys say, as in the admin: the KG memories and
    candidates drawn from it when it is private (``kg.models.private_source_deleted``; from a
    shared thought they stay, without the link), its extraction record, the inner-voice
    exchange whose synthesis it is (an exchange's follow-up question only leaves it). Other
    thoughts' continuity links that name it stay, unresolved, like any link to a thought that
    is not there."""
    from thoughts.selectors import thought_get

    with transaction.atomic():
        thought = thought_get(user=user, thought_id=thought_id)
        # Locked before Django collects what goes with it: an extraction staging candidates for
        # this thought holds the same lock (kg.services.extract), so its candidates are either
        # committed before they are collected here, or never written. Unlocked, they could be
        # committed in between and fail this delete's foreign key check at commit (a 500).
        if not Thought.objects.select_for_update().filter(pk=thought.pk).exists():
            raise NotFound("No such thought.")  # deleted meanwhile by another request
        thought.delete()
