"""Reads of the knowledge graph. One module per use case; the names below are the public
surface, and the only way other apps read KG rows."""

from kg.selectors.graph import entity_neighbors, visible_edges
from kg.selectors.moderation import (
    TARGETS,
    AnyCandidate,
    CandidatePage,
    CandidateQueue,
    Suggestion,
    candidate_kind,
    candidate_querysets,
    candidate_queue,
    candidates_list,
    observation_candidates,
    pending_observations,
    suggestions_for,
)
from kg.selectors.nearest import MemoryHit, Nearest, kg_search, memories_nearest
from kg.selectors.sources import own_source_ids
from kg.selectors.visibility import Memory, memories_by_id, memories_visible_to, visible_q

__all__ = [
    "TARGETS",
    "AnyCandidate",
    "CandidatePage",
    "CandidateQueue",
    "Memory",
    "MemoryHit",
    "Nearest",
    "Suggestion",
    "candidate_kind",
    "candidate_querysets",
    "candidate_queue",
    "candidates_list",
    "entity_neighbors",
    "kg_search",
    "memories_by_id",
    "memories_nearest",
    "memories_visible_to",
    "observation_candidates",
    "own_source_ids",
    "pending_observations",
    "suggestions_for",
    "visible_edges",
    "visible_q",
]
