"""Precision and recall of an extractor against labelled items (used by a test and the bench).

Items are ``{"text", "entities": [{"name"}], "edges": [{"source", "target"}]}``; entities match
by case-insensitive name, edges by (source, target)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
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


_VERSION_ONLY = re.compile(r"v?\d+(?:\.(?:\d+|x))*\+?", re.IGNORECASE)
# Ticket keys are upper-case ("OPS-2291"); "split-42" or "mon-2" are names of things.
_TICKET = re.compile(r"#\d+|[A-Z][A-Z0-9]*-\d+|(?i:PRs?|issues?)")
_ABBREVIATIONS = {"e.g", "e.g.", "i.e", "i.e.", "etc", "etc.", "vs", "vs.", "cf", "todo", "fyi"}
GENERIC_NOUNS = {
    "api", "app", "blog", "bug", "build", "cache", "ci", "cli", "client", "cluster",
    "code", "config", "data", "database", "db", "deploy", "docs", "job", "library",
    "model", "module", "pipeline", "plugin", "project", "queue", "release", "repo", "scheduler",
    "script", "server", "service", "site", "team", "test", "tests", "tool", "ui", "worker",
    "workers", "pr", "fix", "version", "feature", "issue", "changelog", "readme",
}  # fmt: skip


def is_fragment(name: str) -> bool:
    """A predicted name no moderator would keep: a version alone, a ticket or PR number, an
    abbreviation such as "e.g", a single letter, or a bare generic noun."""
    text = name.strip()
    low = text.lower().removeprefix("the ").strip()
    return (
        len(text) <= 1
        or bool(_VERSION_ONLY.fullmatch(text))
        or bool(_TICKET.fullmatch(text))
        or low in _ABBREVIATIONS
        or low in GENERIC_NOUNS
    )


@dataclass
class ProseScore:
    """Entity and edge scores plus the fragment rate and type accuracy on matched entities."""

    entities: Score = field(default_factory=Score)
    edges: Score = field(default_factory=Score)
    predicted: int = 0
    fragments: int = 0
    matched: int = 0
    typed_right: int = 0
    edges_matched: int = 0
    related_right: int = 0  # matched edges whose relation is the gold one

    @property
    def fragment_rate(self) -> float:
        return self.fragments / self.predicted if self.predicted else 0.0

    @property
    def type_accuracy(self) -> float:
        return self.typed_right / self.matched if self.matched else 1.0

    @property
    def relation_accuracy(self) -> float:
        return self.related_right / self.edges_matched if self.edges_matched else 1.0


def total(scores: Iterable[ProseScore]) -> ProseScore:
    """The scores of several sets as one: every count summed."""
    out = ProseScore()
    for got in scores:
        for attr in (
            "predicted",
            "fragments",
            "matched",
            "typed_right",
            "edges_matched",
            "related_right",
        ):
            setattr(out, attr, getattr(out, attr) + getattr(got, attr))
        for part in ("entities", "edges"):
            mine, theirs = getattr(out, part), getattr(got, part)
            mine.tp, mine.fp, mine.fn = (
                mine.tp + theirs.tp,
                mine.fp + theirs.fp,
                mine.fn + theirs.fn,
            )
    return out


def score_prose(
    items: Iterable[dict[str, Any]], extractor: Callable[[str], Extraction]
) -> ProseScore:
    out = ProseScore()
    for item in items:
        result = extractor(item["text"])
        predicted = {e.name.lower(): e.entity_type for e in result.entities}
        gold = {e["name"].lower(): e.get("type", "") for e in item["entities"]}
        out.entities.add(set(predicted), set(gold))
        said = {(e.source.lower(), e.target.lower()): e.rel_type for e in result.edges}
        meant = {
            (e["source"].lower(), e["target"].lower()): e.get("relation") for e in item["edges"]
        }
        out.edges.add(set(said), set(meant))
        for pair in said.keys() & meant.keys():
            out.edges_matched += 1
            out.related_right += said[pair] == meant[pair]
        out.predicted += len(predicted)
        out.fragments += sum(is_fragment(e.name) for e in result.entities)
        for key in predicted.keys() & gold.keys():
            out.matched += 1
            out.typed_right += predicted[key] == gold[key]
    return out
