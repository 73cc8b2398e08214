"""The offline extractor: quality on the labelled dev set and the behaviours the issue names."""

from __future__ import annotations

from pathlib import Path

import pytest

from kg.extraction.heuristic import HeuristicExtractor
from kg.extraction.scoring import load_items, score

DEV = Path(__file__).parent / "fixtures" / "kg_extract_dev.jsonl"
HELDOUT = Path(__file__).parent / "fixtures" / "kg_extract_heldout.jsonl"


@pytest.fixture
def heuristic() -> HeuristicExtractor:
    return HeuristicExtractor()


def names(result) -> set[str]:
    return {e.name for e in result.entities}


def triples(result) -> set[tuple[str, str, str]]:
    return {(e.source, e.rel_type, e.target) for e in result.edges}


@pytest.mark.parametrize("path", [DEV, HELDOUT], ids=["dev", "heldout"])
def test_labelled_set_quality_floor(heuristic, path):
    entities, edges = score(load_items(path), heuristic.extract)
    assert entities.precision >= 0.85 and entities.recall >= 0.85
    assert edges.precision >= 0.8 and edges.recall >= 0.8


@pytest.mark.parametrize(
    "text",
    [
        "This bug is stubborn. However, I have a hunch about where it hides.",
        "Maybe I'm asking the wrong question. The right one will come to me eventually.",
        "Nothing is part of the plan anymore.",
        "The meeting ran long, so I skipped the gym again.",
        "It depends on the weather, I guess.",
        "Sources: a podcast I half listened to and a conversation over lunch.",
    ],
)
def test_no_fragments_from_sentence_starters_pronouns_or_labels(heuristic, text):
    result = heuristic.extract(text)
    assert result.entities == [] and result.edges == []


def test_sources_line_of_a_synthesis_is_never_read(heuristic):
    text = "The billing service depends on Stripe.\nSources: thoughts:1, kge:2 (Vault uses Consul)"
    assert names(heuristic.extract(text)) == {"billing service", "Stripe"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("FastAPI uses Pydantic.", {("FastAPI", "uses", "Pydantic")}),
        ("The export worker depends on RabbitMQ.", {("export worker", "depends_on", "RabbitMQ")}),
        ("web -> api -> db", {("web", "depends_on", "api"), ("api", "depends_on", "db")}),
        ("The PDF renderer is part of the reporting service.",
         {("PDF renderer", "part_of", "reporting service")}),
        ("Gabriel manages the Payments team.", {("Gabriel", "manages", "Payments team")}),
        ("We replaced Travis CI with CircleCI.", {("Travis CI", "replaced_by", "CircleCI")}),
        ("Grafana is used by the SRE team.", {("SRE team", "uses", "Grafana")}),
        ("Kibana reads logs from Elasticsearch.", {("Kibana", "reads_from", "Elasticsearch")}),
        ("ingest_worker reads_from raw_events and writes_to clean_events",
         {("ingest_worker", "reads_from", "raw_events"),
          ("ingest_worker", "writes_to", "clean_events")}),
        ("Priya and Omar manage the platform team.",
         {("Priya", "manages", "platform team"), ("Omar", "manages", "platform team")}),
        ("The mobile app calls the auth API, which depends on Redis.",
         {("mobile app", "calls", "auth API"), ("auth API", "depends_on", "Redis")}),
        ("Python 3.12 broke the legacy parser, and Omar fixed it with a shim.",
         {("Python 3.12", "related_to", "legacy parser"), ("Omar", "works_on", "legacy parser")}),
        ("We migrated from MySQL to Postgres.", {("MySQL", "replaced_by", "Postgres")}),
        # Adverbs and auxiliaries between the subject and its verb.
        ("The export worker also depends on RabbitMQ.",
         {("export worker", "depends_on", "RabbitMQ")}),
        ("The team decided that the ingestion service should use Kafka.",
         {("ingestion service", "uses", "Kafka")}),
        ("Postgres replaced MySQL in 2022.", {("MySQL", "replaced_by", "Postgres")}),
        ("The team lead, Maria, manages the Payments team.",
         {("Maria", "manages", "Payments team")}),
        # Verb-looking nouns: "cache", "deploy" are nouns before a verb or a preposition.
        ("The build cache depends on S3.", {("build cache", "depends_on", "S3")}),
        ("The checkout app uses the build cache for speed.",
         {("checkout app", "uses", "build cache")}),
        ("The deploy job calls the Kubernetes API.", {("deploy job", "calls", "Kubernetes API")}),
    ],
)  # fmt: skip
def test_relations_from_verb_patterns(heuristic, text, expected):
    assert triples(heuristic.extract(text)) == expected


@pytest.mark.parametrize(
    "text",
    ["The crawler doesn't use Selenium anymore.", "The billing service no longer uses Braintree."],
)
def test_negated_relations_are_not_extracted(heuristic, text):
    assert heuristic.extract(text).edges == []


def test_types_where_the_text_says_them(heuristic):
    result = heuristic.extract(
        "Noor is part of the Trust & Safety team. The cohort notebook reads from the MIMIC-III "
        "dataset. dream_buffer stages_to memories_review"
    )
    types = {e.name: e.entity_type for e in result.entities}
    assert types["Noor"] == "person"
    assert types["Trust & Safety team"] == "team"
    assert types["MIMIC-III dataset"] == "dataset"
    assert types["dream_buffer"] == "component"


def test_deduplicated_and_capped():
    result = HeuristicExtractor(max_entities=3, max_edges=2).extract(
        "Redis is used by the API. The API uses Redis. The API uses redis. "
        "The worker calls Stripe, Twilio and SendGrid."
    )
    assert len(result.entities) == 3
    assert len({e.name.lower() for e in result.entities}) == 3
    assert len(result.edges) <= 2
