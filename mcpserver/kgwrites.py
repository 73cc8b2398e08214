"""How a tool writes to the KG for its caller: straight through the KG's services when the
caller may change the graph (a moderator, or a user named in ``MCP_DIRECT_WRITE_USERS``),
otherwise as pending candidates in the moderation queue, marked with the writer so that their
own reads can show them as pending."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from django.contrib.auth.models import User
from django.db import IntegrityError, connection, transaction

from kg import services
from kg.extraction import ExtractedEdge, ExtractedEntity, Extraction
from mcpserver.conf import direct_write_users

MODERATE = "kg.moderate"
# One lock for every staging through MCP: the queue has no unique key, so two writers staging
# the same name at once would otherwise both find it absent and stage it twice.
_STAGING_LOCK = 0x4C4D_4D43  # "LMMC"

T = TypeVar("T")


def may_moderate(user: User) -> bool:
    return user.has_perm(MODERATE)


def writes_direct(user: User) -> bool:
    return may_moderate(user) or user.get_username() in direct_write_users()


def staged_origin(user: User) -> str:
    """The candidates' ``origin``: who staged them through MCP."""
    return f"mcp:{user.pk}"


def stage(
    user: User,
    *,
    entities: Iterable[tuple[str, str]] = (),
    edges: Iterable[tuple[str, str, str]] = (),
    observations: Iterable[services.StagedObservation] = (),
    thought_id: Any = None,
) -> None:
    """Put entities (name, type), relations (source, target, relation) and observations
    before the moderators. Names already pending, approved, in the graph or rejected are not
    staged twice (``stage_extraction``, ``stage_observations``)."""
    extraction = Extraction(
        provider="mcp",
        model="",
        entities=[ExtractedEntity(name, etype, 1.0) for name, etype in entities],
        edges=[ExtractedEdge(src, dst, rel, 1.0) for src, dst, rel in edges],
    )
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_STAGING_LOCK])
        services.stage_extraction(extraction=extraction, origin=staged_origin(user))
        services.stage_observations(
            observations=list(observations), origin=staged_origin(user), thought_id=thought_id
        )


def retrying(write: Callable[[], T]) -> T:
    """``write`` in a savepoint, once more if a concurrent writer created the same natural key
    first: the second attempt finds that row and updates it, so nothing is duplicated or
    lost."""
    try:
        with transaction.atomic():
            return write()
    except IntegrityError:
        with transaction.atomic():
            return write()
