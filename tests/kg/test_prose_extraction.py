"""The offline extractor on realistic multi-sentence prose (tests/kg/fixtures/prose/).

Sets A and B were tuned on; C and D are held out and were never tuned on, so their floors
(just under the figures reached when this was written) check that the rules stay general. The
phenomenon tests use sentences written here, not passages of the sets."""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import pytest

from kg.extraction.heuristic import HeuristicExtractor
from kg.extraction.lexicon import CANONICAL_RELATIONS
from kg.extraction.parse import parse_extraction
from kg.extraction.scoring import is_fragment, load_items, score_prose

PROSE = Path(__file__).parent / "fixtures" / "prose"


@pytest.fixture(scope="module")
def heuristic() -> HeuristicExtractor:
    return HeuristicExtractor()


def _items(*names: str) -> list[dict]:
    return [item for name in names for item in load_items(PROSE / name)]


def names(result) -> set[str]:
    return {e.name for e in result.entities}


def pairs(result) -> set[tuple[str, str]]:
    return {(e.source, e.target) for e in result.edges}


def types(result) -> dict[str, str]:
    return {e.name: e.entity_type for e in result.entities}


@pytest.mark.parametrize(
    ("files", "floors"),
    [
        # Held out (C+D), reached: entity P 0.742 F1 0.733, edge P 0.319 F1 0.180, types 0.592.
        (("set_C.jsonl", "set_D.jsonl"), (0.72, 0.71, 0.30, 0.16, 0.56)),
        # Train (A+B), reached: entity P 0.908 F1 0.849, edge P 0.742 F1 0.460, types 0.925.
        (("set_A.jsonl", "set_B.jsonl"), (0.88, 0.82, 0.71, 0.43, 0.90)),
    ],
    ids=["heldout", "train"],
)
def test_prose_quality_floor(heuristic, files, floors):
    got = score_prose(_items(*files), heuristic.extract)
    ent_p, ent_f1, edge_p, edge_f1, type_acc = floors
    assert got.entities.precision >= ent_p
    assert got.entities.f1 >= ent_f1
    assert got.edges.precision >= edge_p
    assert got.edges.f1 >= edge_f1
    assert got.fragment_rate <= 0.01
    assert got.type_accuracy >= type_acc


def test_latency_of_a_120_word_passage(heuristic):
    text = " ".join(item["text"] for item in _items("set_C.jsonl")[:6])
    text = " ".join(text.split()[:120])
    runs = []
    for _ in range(9):
        started = time.perf_counter()
        heuristic.extract(text)
        runs.append(time.perf_counter() - started)
    assert statistics.median(runs) < 0.1


@pytest.mark.parametrize(
    "name", ["v2", "3.x", "0.8.2", "e.g", "PR", "#812", "X", "the database", "API", "OPS-2291"]
)
def test_fragment_definition(name):
    assert is_fragment(name)


@pytest.mark.parametrize("name", ["Redis", "PostgreSQL 16", "Node.js", "S3", "billing-export job"])
def test_names_are_not_fragments(name):
    assert not is_fragment(name)


def test_sentences_of_markdown_lists_each_give_their_own_evidence(heuristic):
    text = "## Notes\n\n- The sync daemon depends on RabbitMQ.\n- The web tier calls Keycloak."
    result = heuristic.extract(text)
    evidence = {(e.source, e.target): e.evidence for e in result.edges}
    assert evidence == {
        ("sync daemon", "RabbitMQ"): "The sync daemon depends on RabbitMQ.",
        ("web tier", "Keycloak"): "The web tier calls Keycloak.",
    }


def test_evidence_is_the_sentence_inside_a_paragraph(heuristic):
    text = "Grafana reads from InfluxDB. The ingest service relies on PostgreSQL and Redis."
    result = heuristic.extract(text)
    assert {e.evidence for e in result.edges if e.source == "ingest service"} == {
        "The ingest service relies on PostgreSQL and Redis."
    }


def test_coordination_is_distributed(heuristic):
    result = heuristic.extract("The ingest service relies on PostgreSQL, Redis and MinIO.")
    assert pairs(result) == {
        ("ingest service", "PostgreSQL"),
        ("ingest service", "Redis"),
        ("ingest service", "MinIO"),
    }


def test_a_parenthesis_is_an_aside(heuristic):
    result = heuristic.extract("The ledger service uses Sidekiq (background jobs) and Postgres.")
    assert pairs(result) == {("ledger service", "Sidekiq"), ("ledger service", "Postgres")}


def test_relative_clause_after_a_copula(heuristic):
    result = heuristic.extract("Checkout is a Rails app, which relies on Stripe and Memcached.")
    assert pairs(result) == {
        ("Checkout", "Rails"),
        ("Checkout", "Stripe"),
        ("Checkout", "Memcached"),
    }


def test_passive_voice_is_normalised(heuristic):
    result = heuristic.extract("The thumbnail worker is monitored by Prometheus.")
    assert pairs(result) == {("Prometheus", "thumbnail worker")}


def test_listed_subjects_of_are_used_for(heuristic):
    result = heuristic.extract("Kafka, Flink and Iceberg are used by the clickstream pipeline.")
    assert pairs(result) == {
        ("clickstream pipeline", "Kafka"),
        ("clickstream pipeline", "Flink"),
        ("clickstream pipeline", "Iceberg"),
    }


def test_first_person_migration_from_x_to_y(heuristic):
    result = heuristic.extract("I moved my notes from Evernote to Joplin this week.")
    assert [(e.source, e.rel_type, e.target) for e in result.edges] == [
        ("Evernote", "replaced_by", "Joplin")
    ]


def test_version_ranges_are_not_migrations(heuristic):
    result = heuristic.extract("We upgraded the cluster from 1.27 to 1.29 last week.")
    assert result.edges == []


def test_instead_of_is_a_replacement(heuristic):
    result = heuristic.extract("Receipts are now sent through Postmark instead of SendGrid.")
    assert ("SendGrid", "Postmark") in pairs(result)


def test_readme_title_is_the_implied_subject(heuristic):
    text = "# quillpad\n\nA small note-taking app. Written in Go. It stores notes in SQLite."
    result = heuristic.extract(text)
    assert pairs(result) == {("quillpad", "Go"), ("quillpad", "SQLite")}
    assert types(result)["quillpad"] == "project"


def test_lower_case_names_dotted_names_versions_and_acronyms(heuristic):
    result = heuristic.extract(
        "The exporter needs Python 3.11+ and talks to the API through httpx. "
        "Its charts are drawn with matplotlib and served from Node.js 20 over gRPC."
    )
    assert {"Python 3.11", "httpx", "matplotlib", "Node.js 20", "gRPC"} <= names(result)
    assert not {"3.11", "API", "20"} & names(result)


def test_kind_nouns_after_a_technology_are_dropped(heuristic):
    result = heuristic.extract("Reports are kept in a three-node Cassandra cluster.")
    assert "Cassandra" in names(result)
    assert not any("cluster" in n for n in names(result))


def test_possessive_gives_the_part_and_the_whole(heuristic):
    result = heuristic.extract("Acmefold's billing worker writes invoices to S3.")
    assert {"Acmefold", "billing worker", "S3"} <= names(result)
    assert ("billing worker", "Acmefold") in pairs(result)


@pytest.mark.parametrize(
    "text",
    [
        "See e.g. PR #412 and v2.1 for details; the X flag is set in 3.x.",
        "Set RUST_LOG=debug and call Client.from_env() before the first request.",
        "The nightly run took 4h and used 10k rows, about 3x more than before.",
        "Nobody likes the dashboard, and the database is slow again.",
    ],
)
def test_fragments_and_generic_nouns_are_not_staged(heuristic, text):
    assert not any(is_fragment(n) for n in names(heuristic.extract(text)))
    assert heuristic.extract(text).edges == []


def test_types_from_gazetteer_head_noun_and_context(heuristic):
    result = heuristic.extract(
        "The release notes were reviewed by Dana Whitfield. The payments team owns the "
        "settlement worker, which reads from the ledger_entries table and uses pandas. "
        "Config lives in settings.toml."
    )
    got = types(result)
    assert got["Dana Whitfield"] == "person"
    assert got["payments team"] == "team"
    assert got["settlement worker"] == "component"
    assert got["pandas"] == "library"
    assert got["settings.toml"] == "file"


@pytest.mark.parametrize(
    "text",
    [
        "We no longer depend on ImageMagick.",
        "Would moving the queue to NATS be simpler?",
    ],
)
def test_negated_and_hypothetical_relations_give_no_edge(heuristic, text):
    assert heuristic.extract(text).edges == []


def test_model_answers_carry_their_evidence():
    raw = (
        '{"entities": [{"id": "e1", "label": "Vector"}, {"id": "e2", "label": "Loki"}], '
        '"edges": [{"from_id": "e1", "to_id": "e2", "relation": "writes_to", '
        '"evidence": "Logs are shipped to Loki by Vector."}]}'
    )
    _, edges, _ = parse_extraction(raw)
    assert edges[0].evidence == "Logs are shipped to Loki by Vector."


@pytest.mark.django_db
def test_staging_stores_the_evidence_sentence(heuristic):
    from kg.models import EdgeCandidate
    from kg.services import stage_extraction

    extraction = heuristic.extract("Intro line. The sync daemon depends on RabbitMQ.")
    stage_extraction(extraction=extraction, origin="test")
    cand = EdgeCandidate.objects.get()
    assert cand.evidence == "The sync daemon depends on RabbitMQ."


def test_called_names_and_does_not_call(heuristic):
    result = heuristic.extract(
        "I maintain a small Rust crate called tallow-xml. It leans on quick-xml."
    )
    assert pairs(result) == {("tallow-xml", "Rust"), ("tallow-xml", "quick-xml")}


def test_relative_clause_inside_a_coordinated_clause(heuristic):
    result = heuristic.extract(
        "Checkout talks to Appwrite, which handles auth and stores sessions in MariaDB."
    )
    assert ("Appwrite", "MariaDB") in pairs(result)


def test_a_part_that_is_a_known_framework(heuristic):
    result = heuristic.extract("# Driftwood\n\nThe engine is Godot 4, and the UI is Svelte.")
    assert pairs(result) == {("Driftwood", "Godot 4"), ("Driftwood", "Svelte")}


def edges(result) -> set[tuple[str, str, str]]:
    return {(e.source, e.rel_type, e.target) for e in result.edges}


def test_relations_are_in_the_moderators_vocabulary(heuristic):
    """Verbs map to the guidelines' relations; "contains"-like verbs keep their direction and
    "X hosts Y" becomes "Y runs_on X"."""
    text = (
        "The indexer wraps Tantivy. Each Hetzner node hosts Forgejo. The chat-relay service talks "
        "to Matrix."
    )
    got = edges(heuristic.extract(text))
    assert ("indexer", "calls", "Tantivy") in got
    assert ("Forgejo", "runs_on", "Hetzner") in got
    assert ("chat-relay service", "calls", "Matrix") in got
    vocabulary = set(CANONICAL_RELATIONS)
    assert {rel for _, rel, _ in got} <= vocabulary


def test_a_relation_spelled_in_snake_case_is_kept_as_written(heuristic):
    got = edges(heuristic.extract("dream_buffer stages_to memories_review"))
    assert got == {("dream_buffer", "stages_to", "memories_review")}


def test_migration_verb_in_the_present_tense(heuristic):
    got = edges(heuristic.extract("Merged the patch that moves job state from Beanstalkd to NATS."))
    assert ("Beanstalkd", "replaced_by", "NATS") in got


def test_a_kind_noun_stays_when_the_rest_is_no_name(heuristic):
    result = heuristic.extract("When I switched from VS Code to Sublime Text, I kept my keymap.")
    assert ("VS Code", "Sublime Text") in pairs(result)


def test_instead_of_a_gerund_gives_the_replacement_and_no_use(heuristic):
    got = edges(
        heuristic.extract("The mailer now calls Postmark instead of going through Sendgrid.")
    )
    assert ("Sendgrid", "replaced_by", "Postmark") in got
    assert not any(t == "Sendgrid" and rel != "replaced_by" for _, rel, t in got)


def test_rather_than_ends_a_name(heuristic):
    result = heuristic.extract("The report page reads totals from Druid rather than Postgres.")
    assert "Druid" in names(result)
    assert ("Postgres", "Druid") in pairs(result)


def test_a_sentence_opening_with_a_passive_is_about_the_readme_project(heuristic):
    got = edges(heuristic.extract("# lanternd\n\nA status daemon. Maintained by the Infra Guild."))
    assert ("Infra Guild", "maintains", "lanternd") in got


def test_objects_each_with_a_purpose_phrase_are_coordinated(heuristic):
    text = "# tidewater\n\nIt leans on rustls for TLS and on quinn for the QUIC transport."
    got = pairs(heuristic.extract(text))
    assert {("tidewater", "rustls"), ("tidewater", "quinn")} <= got


def test_as_well_as_joins_objects(heuristic):
    got = pairs(heuristic.extract("The importer reads orders from Shopify as well as WooCommerce."))
    assert {("importer", "Shopify"), ("importer", "WooCommerce")} <= got


def test_moving_a_service_to_a_host_means_it_runs_there(heuristic):
    got = edges(heuristic.extract("Sun: moved Vaultwarden to the Odroid and rebooted the router."))
    assert ("Vaultwarden", "runs_on", "Odroid") in got


def test_a_kind_noun_after_a_version_is_dropped(heuristic):
    result = heuristic.extract("flashed Marlin onto the Prusa 3 board last night.")
    assert ("Marlin", "runs_on", "Prusa 3") in edges(result)


def test_both_standing_alone_is_a_subject_so_which_finds_its_antecedent(heuristic):
    got = edges(heuristic.extract("Both talk to Appwrite, which keeps its data in MariaDB."))
    assert ("Appwrite", "stores_in", "MariaDB") in got


def test_requirements_list_items_are_what_the_project_depends_on(heuristic):
    text = "# quern\n\n## Requirements\n\n- Ruby 3.2 or newer\n- libvips, for thumbnails\n"
    got = edges(heuristic.extract(text))
    assert {("quern", "depends_on", "Ruby 3.2"), ("quern", "depends_on", "libvips")} <= got


def test_a_passive_inside_a_parenthesis_is_not_about_the_project(heuristic):
    text = "# quern\n\n## Requirements\n\n- libpq (needed by the pg gem)\n"
    assert not any(t == "quern" for _, t in pairs(heuristic.extract(text)))
