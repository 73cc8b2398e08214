"""What every extractor stage returns: entities and edges by name, with provenance."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ExtractedEntity:
    name: str
    entity_type: str
    confidence: float
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class ExtractedEdge:
    source: str
    target: str
    rel_type: str
    confidence: float
    evidence: str = ""  # the sentence that states the relation, verbatim


@dataclass(frozen=True)
class Extraction:
    provider: str  # "cli", "grok", "heuristic", or "none" (nothing left to read once citations go)
    model: str
    entities: list[ExtractedEntity] = field(default_factory=list)
    edges: list[ExtractedEdge] = field(default_factory=list)
    latency_ms: int = 0
    prompt_hash: str = ""

    @property
    def empty(self) -> bool:
        return not self.entities and not self.edges
