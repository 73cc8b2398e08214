"""Services of the knowledge graph: extraction, staging, moderation and direct writes."""

from __future__ import annotations

from kg.services.extract import text_extract, thought_extract, thought_extract_on_commit
from kg.services.memories import (
    edge_update,
    edge_upsert,
    entity_embed,
    entity_embed_on_commit,
    entity_update,
    entity_upsert,
    observation_embed,
    observation_embed_on_commit,
    observation_update,
    observation_upsert,
)
from kg.services.moderation import (
    DecisionError,
    DecisionItem,
    DecisionOutcome,
    candidate_decide,
    candidates_decide,
    entity_find,
)
from kg.services.staging import StageCounts, stage_extraction, submitted

__all__ = [
    "DecisionError",
    "DecisionItem",
    "DecisionOutcome",
    "StageCounts",
    "candidate_decide",
    "candidates_decide",
    "edge_update",
    "edge_upsert",
    "entity_embed",
    "entity_embed_on_commit",
    "entity_find",
    "entity_update",
    "entity_upsert",
    "observation_embed",
    "observation_embed_on_commit",
    "observation_update",
    "observation_upsert",
    "stage_extraction",
    "submitted",
    "text_extract",
    "thought_extract",
    "thought_extract_on_commit",
]
