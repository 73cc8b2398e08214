"""The offline extractor with a learned scorer: the rules propose, a logistic model trained on
the annotated prose sets (``tests/kg/fixtures/prose``) decides.

Candidates (``kg.extraction.candidates``) are the rules' names and edges plus spans and pairs the
rules did not propose. Two logistic models score them: one whether a candidate is a name a
moderator would keep, one whether an ordered pair in a sentence is an edge. Their weights and
thresholds are ``data/scorer.json``, refitted by ``python -m kg.extraction.training --fit``; the
thresholds were chosen by cross-validation for precision first."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from kg.extraction.candidates import Passage, read_passage
from kg.extraction.entity_types import resolve_type
from kg.extraction.features import PairCandidate, entity_features, pair_candidates
from kg.extraction.heuristic import HeuristicExtractor
from kg.extraction.types import ExtractedEdge, ExtractedEntity, Extraction

WEIGHTS = Path(__file__).resolve().parent / "data" / "scorer.json"


@dataclass(frozen=True)
class Linear:
    """A logistic model over one-hot string features."""

    weights: dict[str, float]
    threshold: float  # for a candidate the rules did not propose
    rule_threshold: float  # for one they did: the rules' word counts for something

    def cut(self, proposed: bool) -> float:
        return self.rule_threshold if proposed else self.threshold

    def probability(self, features: list[str]) -> float:
        z = sum(self.weights.get(f, 0.0) for f in set(features))
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


def _bucket(prob: float) -> int:
    return min(int(prob * 10), 9)


def pair_features(cand: PairCandidate, entity_p: dict[str, float]) -> list[str]:
    """A pair's features and how likely each end is a name, by the entity scorer."""
    a, b = _bucket(entity_p.get(cand.source, 0.0)), _bucket(entity_p.get(cand.target, 0.0))
    return [*cand.features, f"a_ep={a}", f"b_ep={b}", f"ep={min(a, b)}"]


@dataclass(frozen=True)
class Scorer:
    entities: Linear
    edges: Linear

    @classmethod
    def from_dict(cls, data: dict) -> Scorer:
        return cls(
            Linear(*(data["entities"][k] for k in ("weights", "threshold", "rule_threshold"))),
            Linear(*(data["edges"][k] for k in ("weights", "threshold", "rule_threshold"))),
        )


@lru_cache(maxsize=1)
def shipped_scorer() -> Scorer:
    return Scorer.from_dict(json.loads(WEIGHTS.read_text(encoding="utf-8")))


def decide(
    p: Passage,
    entity_p: dict[str, float],
    pairs: list[PairCandidate],
    pair_p: list[float],
    scorer: Scorer,
    *,
    entity_conf: float = 0.7,
    edge_conf: float = 0.6,
) -> Extraction:
    """The names and edges that clear their thresholds; an edge stays only if both its ends
    do (a rule's edge to a name the scorer refuses is a moderator's rejection twice over), and
    of a pair named both ways only the likelier direction stays."""
    kept = {k for k, prob in entity_p.items() if prob >= scorer.entities.cut(p.origin[k] == "rule")}
    chosen: dict[tuple[str, str], tuple[float, PairCandidate]] = {}
    for cand, prob in zip(pairs, pair_p, strict=True):
        pair, back = (cand.source, cand.target), (cand.target, cand.source)
        if prob < scorer.edges.cut(pair in p.rule_edges) or not set(pair) <= kept:
            continue
        if pair not in p.rule_edges and _said_otherwise(p, *pair):
            continue
        if back in chosen and chosen[back][0] >= prob:
            continue
        chosen.pop(back, None)
        chosen[pair] = (prob, cand)
    entities = [
        ExtractedEntity(
            p.names[k], p.rule_types.get(k) or resolve_type(p.names[k], None, p.text), entity_conf
        )
        for k in p.names
        if k in kept
    ]
    edges = []
    for (s, t), (_, cand) in chosen.items():
        rel = p.rule_edges.get((s, t)) or cand.verb_relation or "uses"
        evidence = p.rule_evidence.get((s, t)) or p.sentences[cand.sentence][0]
        edges.append(ExtractedEdge(p.names[s], p.names[t], rel, edge_conf, evidence=evidence))
    return Extraction("heuristic", "heuristic-v3+scorer", entities, edges)


def _said_otherwise(p: Passage, source: str, target: str) -> bool:
    """An added edge the rules' own edges already account for: the rules relate the source
    to a longer name holding the target ("the SOC2 effort", not "SOC2"), or reach the target
    through a name between ("A -> B -> C" gives no A -> C)."""
    ruled = p.rule_edges
    if any(s == source and target in t and t != target for s, t in ruled):
        return True
    return any((source, mid) in ruled and (mid, target) in ruled for _, mid in ruled)


class LearnedExtractor:
    """The rules' extractor behind the learned scorer, with the same ``extract`` door."""

    def __init__(
        self, *, max_entities: int = 20, max_edges: int = 30, entity_conf: float = 0.7,
        edge_conf: float = 0.6, scorer: Scorer | None = None,
    ) -> None:  # fmt: skip
        self.rules = HeuristicExtractor(max_entities=10_000, max_edges=10_000)
        self.max_entities = max_entities
        self.max_edges = max_edges
        self.entity_conf = entity_conf
        self.edge_conf = edge_conf
        self.scorer = scorer

    def extract(self, text: str) -> Extraction:
        scorer = self.scorer or shipped_scorer()
        p = read_passage(text, self.rules)
        entity_p = {k: scorer.entities.probability(entity_features(p, k)) for k in p.names}
        pairs = pair_candidates(p, set(p.names))
        pair_p = [scorer.edges.probability(pair_features(c, entity_p)) for c in pairs]
        out = decide(
            p, entity_p, pairs, pair_p, scorer, entity_conf=self.entity_conf,
            edge_conf=self.edge_conf,
        )  # fmt: skip
        return Extraction(
            out.provider, out.model, out.entities[: self.max_entities], out.edges[: self.max_edges]
        )
