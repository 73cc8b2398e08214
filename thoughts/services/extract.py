"""A stored thought's KG extraction: read it, run the chain, stage the candidates (``kg``)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import transaction

from kg.extraction import Extraction, extract
from kg.services import StageCounts, extraction_record, stage_extraction
from legacymind.celery import Publication, publish_on_commit
from legacymind.errors import NotFound
from thoughts.models import Thought


def thought_extract(
    *, thought_id: Any, origin: str | None = None, dry_run: bool = False
) -> tuple[Extraction, StageCounts]:
    """Extract from a stored thought; candidates record it as ``staged_by_thought``, and
    (unless ``dry_run``) the thought is recorded as extracted, even when nothing was staged."""
    thought = Thought.objects.filter(id=thought_id).only("id", "content", "origin").first()
    if thought is None:
        raise NotFound(f"thought {thought_id} does not exist")
    result = extract(thought.content, thought_id=thought.id)
    if dry_run:
        return result, StageCounts()
    with transaction.atomic():
        # The owner may delete the thought while its words are with the extractor: once this
        # lock is held the delete waits for the staging, and if the delete came first there is
        # nothing to stage for (the candidates would name a thought that is gone).
        if not Thought.objects.select_for_update().filter(id=thought.id).exists():
            raise NotFound(f"thought {thought_id} does not exist")
        staged = stage_extraction(
            extraction=result, origin=origin or thought.origin or "thought", thought_id=thought.id
        )
        extraction_record(thought_id=thought.id, provider=result.provider)
    return result, staged


def thought_extract_on_commit(*, thought_id: Any, origin: str | None = None) -> Publication | None:
    """Queue the extraction of a thought once the current transaction commits (the thoughts and
    inner-voice pipelines call this); after the commit the result says whether it went out.
    None when ``KG_AUTO_EXTRACT`` is off."""
    if not settings.KG_AUTO_EXTRACT:
        return None
    from thoughts.tasks import thought_extract_task

    return publish_on_commit(lambda: thought_extract_task.delay(str(thought_id), origin))
