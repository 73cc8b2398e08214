"""The packaged name lists of the offline extractor and the rules that lean on them (issue 33), each
on sentences written here: the technology gazetteer file, given names, a company after "at",
nouns that only say which of a product's things is meant, plain English words and command lines
refused as names, "X is written in Y" and other passives, and a work log's unnamed project."""

from __future__ import annotations

import pytest

from kg.extraction.entity_types import entity_type
from kg.extraction.finish import only_in_commands
from kg.extraction.gazetteer import CAPITALISED_TYPES, KNOWN_TYPES
from kg.extraction.heuristic import HeuristicExtractor
from kg.extraction.names import clean, known_type


@pytest.fixture(scope="module")
def extract():
    return HeuristicExtractor().extract


def relations(result) -> set[tuple[str, str, str]]:
    return {(e.source, e.rel_type, e.target) for e in result.edges}


def types(result) -> dict[str, str]:
    return {e.name: e.entity_type for e in result.entities}


def test_gazetteer_file_types_names_the_short_table_does_not_hold():
    assert len(KNOWN_TYPES) > 5000
    assert known_type("ScyllaDB") == "technology"
    assert known_type("pgbouncer") == "tool"
    assert known_type("Backblaze B2") == "service"
    assert known_type("GSM8K") == "dataset"


def test_a_listed_name_that_is_an_english_word_is_typed_only_with_a_capital():
    assert "crystal" in CAPITALISED_TYPES
    assert known_type("Crystal") == "technology"
    assert known_type("crystal") is None


def test_known_names_are_typed_in_a_passage(extract):
    result = extract("The ledger service writes its audit trail to ScyllaDB through PgBouncer.")
    assert types(result)["ScyllaDB"] == "technology"


def test_a_given_name_is_a_person_without_any_other_cue():
    assert entity_type("Ingrid Solberg", "Ingrid Solberg and the mapping crew met in Oslo.") == (
        "person"
    )
    assert entity_type("Solberg Mapping", "Solberg Mapping ships a tile server.") != "person"


def test_a_name_after_at_is_a_company():
    text = "Every squad at Fernbrook deploys with Argo CD."
    assert entity_type("Fernbrook", text) == "organization"


def test_a_known_name_before_a_lower_case_noun_names_a_part_of_it():
    assert entity_type("Nomad scheduler", "the Nomad scheduler restarts jobs") == "component"
    assert entity_type("PostgreSQL 16", "runs PostgreSQL 16") == "technology"


def test_a_noun_saying_which_of_a_products_things_is_meant_is_dropped():
    assert clean("Kafka topic") == "Kafka"
    assert clean("Redis subchart") == "Redis"
    # A capitalised last word is part of a product's own name.
    assert clean("Proxmox Backup Server") == "Proxmox Backup Server"


def test_a_plain_english_word_is_no_name(extract):
    result = extract("The upgrade to Kubernetes needed almost no downtime.")
    assert "almost" not in {e.name for e in result.entities}


def test_command_lines_in_backticks_are_no_names():
    assert only_in_commands("tern", "Run `tern sync --all` after each deploy.")
    assert not only_in_commands("tern", "tern keeps state in SQLite. Run `tern sync`.")
    assert not only_in_commands("tern", "The `tern` binary is tiny.")


def test_written_in_after_an_auxiliary_is_built_with(extract):
    result = extract("Lanternfish is written in Zig and stores its index in SQLite.")
    assert ("Lanternfish", "built_with", "Zig") in relations(result)


def test_a_passive_whose_subject_is_common_words_is_about_the_project(extract):
    text = "# tidepool\n\ntidepool is a tiny wiki. Page revisions are kept in Git."
    assert ("tidepool", "stores_in", "Git") in relations(extract(text))


def test_a_log_about_a_coined_name_gives_its_verbs_that_subject(extract):
    result = extract("Day 4 on ferrywatch. Deployed it to Fly.io after lunch.")
    assert ("ferrywatch", "runs_on", "Fly.io") in relations(result)


def test_a_log_about_an_english_word_names_no_project(extract):
    result = extract("Day 4 on purpose. Deployed it to Fly.io after lunch.")
    assert all(e.source != "purpose" for e in result.edges)
