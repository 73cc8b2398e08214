"""Extraction as a use case: run the chain on a text and stage what it found. A stored
thought's extraction (``thoughts.services.thought_extract``) reads the thought, then stages
through ``stage_extraction`` here."""

from __future__ import annotations

from typing import Any

from kg.extraction import Extraction, extract
from kg.services.staging import StageCounts, stage_extraction


def text_extract(
    *, text: str, dry_run: bool, origin: str = "api", thought_id: Any = None
) -> tuple[Extraction, StageCounts]:
    """Extract from ``text``; unless ``dry_run``, stage the results as pending candidates."""
    result = extract(text, thought_id=thought_id)
    if dry_run:
        return result, StageCounts()
    return result, stage_extraction(extraction=result, origin=origin, thought_id=thought_id)
