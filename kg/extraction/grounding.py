"""A model's extraction held to the same contract as the offline extractor's (issue 33).

A chat model can name things the passage never mentions, quote a sentence it paraphrased, or
invent a type. Each of those reaches a moderator's queue as a candidate to reject, so before a
model's answer is used: every entity's name must be written in the passage, its type must be
one of the guidelines' types (else the offline typing rules decide), each edge's evidence must
be a sentence of the passage verbatim (else the passage's sentence naming both ends, else the
edge goes), and relations are mapped to the moderators' vocabulary. An answer with nothing left
is no answer: the chain goes on to its next stage and, last, the offline extractor.
"""

from __future__ import annotations

import re
from dataclasses import replace

from kg.extraction.heuristic import entity_type
from kg.extraction.lexicon import CANONICAL_RELATIONS, canonical
from kg.extraction.phrases import sentence_spans
from kg.extraction.types import ExtractedEdge, ExtractedEntity, Extraction

ENTITY_TYPES = frozenset(
    {
        "technology", "library", "tool", "service", "component", "project", "person", "team",
        "organization", "file", "dataset", "concept",
    }
)  # fmt: skip


def _flat(text: str) -> str:
    return " ".join(text.split())


def _found(name: str, passage: str) -> str | None:
    """The name as the passage first writes it, as a whole word (or words), in any case."""
    pattern = r"(?<![\w])" + r"\s+".join(re.escape(w) for w in name.split()) + r"(?![\w])"
    match = re.search(pattern, passage, re.IGNORECASE)
    return match.group() if match else None


def _written(name: str, passage: str) -> bool:
    return _found(name, passage) is not None


def _evidence(edge: ExtractedEdge, sentences: list[str]) -> str | None:
    """The model's evidence when it is a sentence of the passage (or a whole part of one),
    else the first sentence naming both ends; None when no sentence does."""
    said = _flat(edge.evidence)
    if said and any(said in sentence for sentence in sentences):
        return next(s for s in sentences if said in s)
    return next(
        (s for s in sentences if _written(edge.source, s) and _written(edge.target, s)), None
    )


def _relation(rel: str) -> tuple[str, bool]:
    mapped, flip = canonical(rel)
    return (mapped, flip) if mapped in CANONICAL_RELATIONS else ("related_to", False)


def ground(result: Extraction, text: str) -> Extraction:
    """``result`` with only what the passage ``text`` supports (see the module's docstring)."""
    passage = _flat(text)
    sentences = [_flat(text[a:b]) for a, b in sentence_spans(text)]
    entities: dict[str, ExtractedEntity] = {}
    for entity in result.entities:
        surface = _found(entity.name, passage)  # the writer's spelling, not the model's
        if surface is None:
            continue
        kind = entity.entity_type
        if kind not in ENTITY_TYPES:
            kind = entity_type(surface, text)
        entities.setdefault(entity.name.lower(), replace(entity, name=surface, entity_type=kind))
    edges: dict[tuple[str, str], ExtractedEdge] = {}
    for edge in result.edges:
        ends = entities.get(edge.source.lower()), entities.get(edge.target.lower())
        if ends[0] is None or ends[1] is None:
            continue
        evidence = _evidence(edge, sentences)
        if evidence is None:
            continue
        rel, flip = _relation(edge.rel_type)
        src, dst = ends[0].name, ends[1].name
        src, dst = (dst, src) if flip else (src, dst)
        edges.setdefault(
            (src.lower(), dst.lower()), replace(edge, source=src, target=dst, rel_type=rel,
                                                evidence=evidence)
        )  # fmt: skip
    return replace(result, entities=list(entities.values()), edges=list(edges.values()))
