"""Services of the knowledge graph: extraction, staging, moderation and direct writes."""

from __future__ import annotations

from kg.services.extract import text_extract
from kg.services.memories import (
    edge_update,
    edge_upsert,
    entity_clash,
    entity_embed,
    entity_embed_on_commit,
    entity_update,
    entity_upsert,
    memories_backfill,
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
from kg.services.staging import (
    StageCounts,
    StagedObservation,
    extraction_record,
    extraction_status,
    stage_extraction,
    stage_observations,
    submitted,
)
from kg.services.touches import memories_bump, memories_touch, touch_later, touches_flush

__all__ = [
    "DecisionError",
    "DecisionItem",
    "DecisionOutcome",
    "StageCounts",
    "StagedObservation",
    "candidate_decide",
    "candidates_decide",
    "edge_update",
    "edge_upsert",
    "entity_clash",
    "entity_embed",
    "entity_embed_on_commit",
    "entity_find",
    "entity_update",
    "entity_upsert",
    "extraction_record",
    "extraction_status",
    "memories_backfill",
    "memories_bump",
    "memories_touch",
    "observation_embed",
    "observation_embed_on_commit",
    "observation_update",
    "observation_upsert",
    "stage_extraction",
    "stage_observations",
    "submitted",
    "text_extract",
    "touch_later",
    "touches_flush",
]
