"""Moderators' decisions on staged candidates: approve, reject (blocklist) and alias. One
module per candidate kind (``entities``, ``edges``, ``observations``) over what they share
(``base``); ``decide`` applies a batch."""

from __future__ import annotations

from kg.services.moderation.base import (
    DECISIONS,
    KINDS,
    DecisionError,
    DecisionItem,
    DecisionOutcome,
    entity_find,
)
from kg.services.moderation.decide import candidate_decide, candidates_decide

__all__ = [
    "DECISIONS",
    "KINDS",
    "DecisionError",
    "DecisionItem",
    "DecisionOutcome",
    "candidate_decide",
    "candidates_decide",
    "entity_find",
]
