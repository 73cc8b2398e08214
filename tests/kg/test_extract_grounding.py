"""The chat path on a multi-sentence passage: the model's answer, from the loopback
OpenAI-wire server, is held to the offline extractor's contract (names written in the passage,
evidence a sentence of it, types and relations from the vocabulary), and an answer with nothing
left falls back to the offline extractor."""

from __future__ import annotations

import json

import pytest

from kg.extraction import extract
from kg.extraction.grounding import ENTITY_TYPES, ground
from kg.extraction.lexicon import CANONICAL_RELATIONS
from kg.extraction.types import ExtractedEdge, ExtractedEntity, Extraction

PASSAGE = (
    "# fernhook\n\n"
    "fernhook is a webhook relay written in Go. It keeps delivery state in SQLite and "
    "retries failed deliveries with exponential backoff. Incoming events are published to "
    "NATS, and the dashboard reads them from there."
)


def _answer(entities: list[tuple[str, str]], edges: list[tuple[int, int, str, str]]) -> str:
    return json.dumps(
        {
            "entities": [
                {"id": f"e{k}", "label": label, "type": kind}
                for k, (label, kind) in enumerate(entities, 1)
            ],
            "edges": [
                {"from_id": f"e{a}", "to_id": f"e{b}", "relation": rel, "evidence": said}
                for a, b, rel, said in edges
            ],
        }
    )


@pytest.fixture
def grounded(grok, settings):
    settings.KG_EXTRACT_GROUNDED = True
    return grok


def test_a_grounded_answer_keeps_what_the_passage_says(grounded):
    grounded.chat_fn = lambda messages: _answer(
        [("fernhook", "project"), ("Go", "language"), ("SQLite", "technology"),
         ("NATS", "technology")],
        [(1, 2, "written_in", "fernhook is a webhook relay written in Go."),
         (1, 3, "persists state in", "It keeps delivery state in SQLite"),
         (1, 4, "publishes_to", "Incoming events are published to NATS.")],
    )  # fmt: skip
    result = extract(PASSAGE)
    assert result.provider == "grok"
    by_name = {e.name: e.entity_type for e in result.entities}
    assert set(by_name) == {"fernhook", "Go", "SQLite", "NATS"}
    assert set(by_name.values()) <= ENTITY_TYPES  # "language" is no type: the rules decide
    assert by_name["Go"] == "technology"
    said = {(e.source, e.target): e.evidence for e in result.edges}
    # A part of a sentence stands for its whole sentence; every evidence is verbatim.
    assert said[("fernhook", "SQLite")] == (
        "It keeps delivery state in SQLite and retries failed deliveries with exponential backoff."
    )
    assert all(e.evidence in " ".join(PASSAGE.split()) for e in result.edges)
    assert {e.rel_type for e in result.edges} <= set(CANONICAL_RELATIONS)


def test_invented_names_and_unsupported_edges_are_dropped(grounded):
    grounded.chat_fn = lambda messages: _answer(
        [("fernhook", "project"), ("Kafka", "technology"), ("SQLite", "technology"),
         ("NATS", "technology")],
        [(1, 2, "publishes_to", "fernhook publishes to Kafka."),
         (3, 4, "replicates_to", "SQLite replicates to NATS.")],
    )  # fmt: skip
    result = extract(PASSAGE)
    assert result.provider == "grok"
    assert {e.name for e in result.entities} == {"fernhook", "SQLite", "NATS"}
    # Kafka is not in the passage; no sentence names SQLite and NATS together.
    assert result.edges == []


def test_an_answer_with_nothing_in_the_passage_falls_back_to_the_offline_extractor(grounded):
    grounded.chat_fn = lambda messages: _answer(
        [("Billing API", "service"), ("Postgres", "technology")],
        [(1, 2, "depends_on", "The Billing API depends on Postgres.")],
    )
    result = extract(PASSAGE)
    assert len(grounded.requests) == 1
    assert result.provider == "heuristic"
    assert "SQLite" in {e.name for e in result.entities}
    assert all(e.evidence for e in result.edges)


def test_the_prompt_asks_for_the_evidence_sentence(grounded):
    grounded.chat_fn = lambda messages: _answer([("fernhook", "project")], [])
    extract(PASSAGE)
    prompt = json.dumps(grounded.requests[0]["body"])
    assert "evidence" in prompt and "verbatim" in prompt
    assert "SQLite" in prompt


def _model_answer(entities, edges) -> Extraction:
    return Extraction(
        "grok",
        "grok-test",
        [ExtractedEntity(name, kind, 0.8) for name, kind in entities],
        [ExtractedEdge(s, t, rel, 0.7, evidence=said) for s, t, rel, said in edges],
    )


def test_names_match_in_any_case_but_only_as_whole_words():
    answer = _model_answer([("sqlite", "technology"), ("Go", "technology"), ("NAT", "tool")], [])
    got = ground(answer, PASSAGE)
    # "NAT" is inside "NATS", not a word of the passage; names take the passage's spelling.
    assert {e.name for e in got.entities} == {"SQLite", "Go"}


def test_a_verb_relation_is_mapped_and_its_ends_swapped_when_the_vocabulary_says_so():
    answer = _model_answer(
        [("NATS", "technology"), ("fernhook", "project")],
        [("NATS", "fernhook", "hosts", "Incoming events are published to NATS")],
    )
    (edge,) = ground(answer, PASSAGE).edges
    assert (edge.source, edge.rel_type, edge.target) == ("fernhook", "runs_on", "NATS")
    assert edge.evidence == (
        "Incoming events are published to NATS, and the dashboard reads them from there."
    )


def test_a_paraphrased_evidence_is_replaced_by_the_sentence_naming_both_ends():
    answer = _model_answer(
        [("fernhook", "project"), ("Go", "technology")],
        [("fernhook", "Go", "built_with", "fernhook is implemented in the Go language.")],
    )
    (edge,) = ground(answer, PASSAGE).edges
    assert edge.evidence == "fernhook is a webhook relay written in Go."
