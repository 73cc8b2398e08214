"""Entity and relation extraction: CLI -> Grok -> heuristic (see ``chain``)."""

from __future__ import annotations

from kg.extraction.chain import ExtractionUnavailable, extract
from kg.extraction.types import ExtractedEdge, ExtractedEntity, Extraction

__all__ = ["ExtractedEdge", "ExtractedEntity", "Extraction", "ExtractionUnavailable", "extract"]
