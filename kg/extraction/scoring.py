"""Precision and recall of an extractor against labelled items (used by a test and the bench).

Items are ``{"text", "entities": [{"name"}], "edges": [{"source", "target"}]}``; entities match
by case-insensitive name, edges by (source, target)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kg.extraction.types import Extraction


@dataclass
class Score:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def add(self, predicted: set[Any], gold: set[Any]) -> None:
        self.tp += len(predicted & gold)
        self.fp += len(predicted - gold)
        self.fn += len(gold - predicted)


def load_items(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def score(
    items: Iterable[dict[str, Any]], extractor: Callable[[str], Extraction]
) -> tuple[Score, Score]:
    """(entity score, edge score) summed over ``items``."""
    entities, edges = Score(), Score()
    for item in items:
        result = extractor(item["text"])
        entities.add(
            {e.name.lower() for e in result.entities},
            {e["name"].lower() for e in item["entities"]},
        )
        edges.add(
            {(e.source.lower(), e.target.lower()) for e in result.edges},
            {(e["source"].lower(), e["target"].lower()) for e in item["edges"]},
        )
    return entities, edges
