"""Rules of the offline extractor for real prose (issue 33), each on sentences written here:
passives whose agent comes last, "which" after a phrase that was no relation's object, the topic
of a work log, and the English-noun filter."""

from __future__ import annotations

import pytest

from kg.extraction.heuristic import HeuristicExtractor
from kg.extraction.nouns import common_noun, marked_as_name


@pytest.fixture(scope="module")
def extract():
    return HeuristicExtractor().extract


def relations(result) -> set[tuple[str, str, str]]:
    return {(e.source, e.rel_type, e.target) for e in result.edges}


def test_agent_after_a_passive_is_the_source(extract):
    got = extract("Metrics from the billing daemon are forwarded to Graphite by Telegraf.")
    assert ("Telegraf", "writes_to", "Graphite") in relations(got)
    # The subject's origin is what the agent reads from; nothing points back at the agent.
    assert ("Telegraf", "reads_from", "billing daemon") in relations(got)
    assert not any(e.target == "Telegraf" for e in got.edges)


def test_by_without_a_passive_is_not_an_agent(extract):
    got = extract("The ingest worker writes to Graphite by default.")
    assert {e.source for e in got.edges} <= {"ingest worker"}


def test_which_refers_to_the_phrase_before_it(extract):
    got = extract(
        "We moved the archive to Wasabi. Reports are produced by the ledger-close job, which "
        "then uploads to Wasabi."
    )
    assert ("ledger-close job", "writes_to", "Wasabi") in relations(got)
    assert not any(e.source == e.target for e in got.edges)


def test_work_log_opening_names_the_subject_of_later_sentences(extract):
    got = extract("day 4 on the kiln monitor. we're using Mosquitto for messages now.")
    assert ("kiln monitor", "uses", "Mosquitto") in relations(got)
    assert {e.name: e.entity_type for e in got.entities}["kiln monitor"] == "project"


def test_work_log_opening_without_a_thing_sets_no_subject(extract):
    got = extract("notes for now: we're using Mosquitto for messages.")
    assert got.edges == []
    assert "now" not in {e.name for e in got.entities}


def test_a_lone_english_noun_is_not_staged(extract):
    got = extract("The ingest worker writes receipts to archives.")
    assert "archives" not in {e.name for e in got.entities}
    assert got.edges == []


def test_an_english_noun_the_writer_marked_as_a_name_is_kept(extract):
    got = extract("The ingest worker writes receipts to `archives`.")
    assert ("ingest worker", "writes_to", "archives") in relations(got)


def test_noun_list_knows_english_nouns_but_not_technology_names():
    assert common_noun("receipts") and common_noun("invoices")
    assert not common_noun("nginx")  # the gazetteer knows it
    assert not common_noun("Receipts")  # capitalised: may be a product
    assert marked_as_name("archives", "to the `archives` bucket")
    assert not marked_as_name("archives", "to the archives")


def test_a_title_that_is_an_english_word_stays_the_project(extract):
    got = extract("# lantern\n\nIt keeps its state in SQLite.")
    assert ("lantern", "stores_in", "SQLite") in relations(got)


def test_list_after_a_colon_gives_the_verb_its_objects(extract):
    got = extract("The exporter depends on: Redis, Kafka and MinIO.")
    assert {("exporter", "depends_on", x) for x in ("Redis", "Kafka", "MinIO")} <= relations(got)


def test_list_after_a_plural_object_and_colon_names_each_one(extract):
    got = extract("# relay\n\nIt talks to three internal services: Search and Mailroom.")
    assert {("relay", "calls", "Search"), ("relay", "calls", "Mailroom")} <= relations(got)
    assert not any("services" in e.name for e in got.entities)


def test_clause_after_a_colon_is_no_list(extract):
    got = extract("The fix uses a simple trick: retry twice.")
    assert got.edges == []


def test_lower_case_tools_in_a_migration_are_names(extract):
    got = extract("Evening: moved the resolver from dnsmasq to unbound.")
    assert ("dnsmasq", "replaced_by", "unbound") in relations(got)


def test_english_nouns_in_from_to_are_no_migration(extract):
    assert extract("moved the deploy from staging to production today.").edges == []


def test_possessive_part_stands_for_the_project(extract):
    got = extract(
        "# orbitfit\n\norbitfit fits orbits. Its numeric core is a Fortran 2008 module wrapped "
        "with f2py."
    )
    assert ("orbitfit", "built_with", "Fortran 2008") in relations(got)
    assert ("orbitfit", "uses", "f2py") in relations(got)
    assert "numeric core" not in {e.name for e in got.entities}


def test_changelog_heading_names_the_project_not_the_document(extract):
    got = extract("# quarrel changelog\n\n## 2.0\n\n- The sync client is built on httpx.")
    assert "quarrel" in {e.name for e in got.entities}
    assert "quarrel changelog" not in {e.name.lower() for e in got.entities}


def test_a_verb_between_noun_and_preposition_ends_the_relation(extract):
    # "build" is a noun here: the verb of the clause is "goes", so no built_with edge.
    got = extract("day 3 on Moth Garden. the build goes up on itch.io tonight.")
    assert not any(e.rel_type == "built_with" for e in got.edges)


def test_name_glossed_as_the_writers_app_is_what_it_refers_to(extract):
    got = extract("Pebblebox (our little backup tool) turned two. It's a Go app these days.")
    assert ("Pebblebox", "built_with", "Go") in relations(got)


def test_release_notes_opening_names_the_project(extract):
    got = extract("Saltmarsh Studio: release notes for 2.1\n\n- Networking now runs on ENet.")
    assert ("Saltmarsh Studio", "runs_on", "ENet") in relations(got)
    assert "Networking" not in {e.name for e in got.entities}


def test_replacement_needs_a_named_old_end(extract):
    got = extract("- replaced the hand-rolled retry code with Tenacity")
    assert not any(e.rel_type == "replaced_by" for e in got.edges)
    got = extract("- replaced Backoff with Tenacity")
    assert ("Backoff", "replaced_by", "Tenacity") in relations(got)


def test_pairing_in_a_log_means_the_person_works_on_it(extract):
    got = extract("- Paired with Ingrid on the invoice-sync job; it writes to Snowflake.")
    assert ("Ingrid", "works_on", "invoice-sync job") in relations(got)
    assert {e.name: e.entity_type for e in got.entities}["Ingrid"] == "person"


def test_handles_are_people_without_the_at_sign(extract):
    got = extract("Thanks to @mira-k and @tobias for the fixes. Write to ops@example.org.")
    kinds = {e.name: e.entity_type for e in got.entities}
    assert kinds.get("mira-k") == "person" and kinds.get("tobias") == "person"
    assert not any("example" in name for name in kinds)  # an address is no node


def test_it_refers_to_the_thing_that_opens_its_sentence(extract):
    got = extract(
        "Caddy fronts the site. The upload-scanner service stalls because it calls ClamAV "
        "synchronously."
    )
    assert ("upload-scanner service", "calls", "ClamAV") in relations(got)
    assert ("Caddy", "calls", "ClamAV") not in relations(got)


def test_run_x_on_y_puts_the_first_on_the_second(extract):
    got = extract("The badge runs MicroPython on a pair of ESP32-S3 boards wired over SPI.")
    assert ("MicroPython", "runs_on", "ESP32-S3") in relations(got)


def test_bullet_opening_with_a_thing_gives_the_participle_its_subject(extract):
    got = extract("# quern changelog\n\n- New streaming parser, built on simdjson.")
    assert ("streaming parser", "built_with", "simdjson") in relations(got)
    assert ("quern", "built_with", "simdjson") not in relations(got)


def test_words_listed_after_a_plural_kind_are_names_of_that_kind(extract):
    got = extract("The gateway, Portcullis, talks to two backend services: ledger and notary.")
    kinds = {e.name: e.entity_type for e in got.entities}
    assert kinds.get("ledger") == "service" and kinds.get("notary") == "service"
    assert {("Portcullis", "calls", "ledger"), ("Portcullis", "calls", "notary")} <= relations(got)


def test_name_apposed_to_a_framework_kind_noun_is_built_with_it(extract):
    got = extract("Our Django monolith, Tessera, sends mail through Postmark.")
    assert ("Tessera", "built_with", "Django") in relations(got)


def test_what_the_writer_started_is_the_subject_of_the_passage(extract):
    got = extract(
        "Two winters ago I started quillpad as a side project. The project joined the Larkspur "
        "Foundation in May."
    )
    assert ("quillpad", "part_of", "Larkspur Foundation") in relations(got)


def test_a_word_that_only_looks_like_a_past_tense_is_still_a_name(extract):
    got = extract("# seedbed\n\nseedbed stores its state in SQLite.")
    assert ("seedbed", "stores_in", "SQLite") in relations(got)


def test_lower_case_ticket_lookalike_is_a_name():
    from kg.extraction.scoring import is_fragment

    assert is_fragment("OPS-2291") and not is_fragment("split-42")


def test_optional_extra_pulls_in_for_the_project(extract):
    got = extract("# lintel\n\nThe optional `trace` extra pulls in opentelemetry-sdk.")
    assert ("lintel", "uses", "opentelemetry-sdk") in relations(got)


def test_running_x_on_y(extract):
    got = extract("A year of running Gitea on a single Hetzner box taught me patience.")
    assert ("Gitea", "runs_on", "Hetzner") in relations(got)


def test_minimum_version_in_release_notes_is_a_requirement(extract):
    got = extract("## Harrier for Android, release 2.0.1\n\n- The minimum SDK is now Android 10.")
    assert ("Harrier", "depends_on", "Android 10") in relations(got)
    assert ("Harrier", "runs_on", "Android") in relations(got)
    got = extract("# pellet\n\n- PostgreSQL 15 is now the minimum.")
    assert ("pellet", "depends_on", "PostgreSQL 15") in relations(got)


def test_protocol_after_over_is_used_by_the_subject(extract):
    got = extract("The soil node posts samples to my openhab instance over Zigbee each hour.")
    assert ("soil node", "writes_to", "openhab") in relations(got)
    assert ("soil node", "uses", "Zigbee") in relations(got)


def test_title_case_english_word_alone_is_no_name(extract):
    got = extract("The dialog freezes when you open Settings. Improved Stability overall.")
    assert {e.name for e in got.entities} & {"Settings", "Stability"} == set()


def test_title_case_english_word_in_a_relation_is_kept(extract):
    got = extract("Our cron host ships its logs to Beacon.")
    assert "Beacon" in {e.name for e in got.entities}


def test_verb_inside_a_title_case_name_is_no_verb(extract):
    got = extract("- Raised the Minimum Supported Go Version again.")
    assert not any(e.rel_type == "integrates_with" for e in got.edges)


def test_link_targets_and_dates_are_not_names(extract):
    got = extract("# sprocket\n\n[![build](https://badges.example.io/ci/sprocket)](x). Thu 3 Oct.")
    assert {e.name for e in got.entities} == {"sprocket"}


def test_lower_case_appositive_name_is_the_subject(extract):
    got = extract("A Rust daemon, pollux, polls Redis for new jobs.")
    assert ("pollux", "reads_from", "Redis") in relations(got)
    assert ("pollux", "built_with", "Rust") in relations(got)
