"""Extraction as a use case: run the chain on a text or a thought and stage what it found."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from kg.extraction import Extraction, extract
from kg.services.staging import StageCounts, stage_extraction
from legacymind.celery import Publication, publish_on_commit
from legacymind.errors import NotFound


def text_extract(
    *, text: str, dry_run: bool, origin: str = "api", thought_id: Any = None
) -> tuple[Extraction, StageCounts]:
    """Extract from ``text``; unless ``dry_run``, stage the results as pending candidates."""
    result = extract(text, thought_id=thought_id)
    if dry_run:
        return result, StageCounts()
    return result, stage_extraction(extraction=result, origin=origin, thought_id=thought_id)


def thought_extract(
    *, thought_id: Any, origin: str | None = None, dry_run: bool = False
) -> tuple[Extraction, StageCounts]:
    """Extract from a stored thought; candidates record it as ``staged_by_thought``, and
    (unless ``dry_run``) the thought is recorded as extracted, even when nothing was staged."""
    from kg.models import ThoughtExtraction
    from thoughts.models import Thought

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
        ThoughtExtraction.objects.update_or_create(
            thought_id=thought.id,
            defaults={"extracted_at": timezone.now(), "provider": result.provider[:32]},
        )
    return result, staged


def thought_extract_on_commit(*, thought_id: Any, origin: str | None = None) -> Publication | None:
    """Queue the extraction of a thought once the current transaction commits (the thoughts and
    inner-voice pipelines call this); after the commit the result says whether it went out.
    None when ``KG_AUTO_EXTRACT`` is off."""
    if not settings.KG_AUTO_EXTRACT:
        return None
    from kg.tasks import thought_extract_task

    return publish_on_commit(lambda: thought_extract_task.delay(str(thought_id), origin))
