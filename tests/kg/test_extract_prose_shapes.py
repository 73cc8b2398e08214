"""The grammatical shapes the offline extractor reads in multi-sentence prose (issue 33), one test
per shape, each on a passage written for the test (none is taken from the prose sets). Each edge
carries the sentence it came from."""

from __future__ import annotations

import pytest

from kg.extraction.heuristic import HeuristicExtractor


def edges(text: str) -> dict[tuple[str, str], tuple[str, str]]:
    """(source, target) -> (relation, evidence), ends lower-cased."""
    result = HeuristicExtractor().extract(text)
    return {(e.source.lower(), e.target.lower()): (e.rel_type, e.evidence) for e in result.edges}


def names(text: str) -> set[str]:
    return {e.name.lower() for e in HeuristicExtractor().extract(text).entities}


def test_it_is_a_kind_built_with_keeps_it_as_the_subject():
    text = "# hollyhock\n\nhollyhock syncs calendars. It is a Kotlin program built with Ktor."
    got = edges(text)
    assert got[("hollyhock", "kotlin")][0] == "built_with"
    assert ("hollyhock", "ktor") in got
    assert got[("hollyhock", "ktor")][1] == "It is a Kotlin program built with Ktor."
    assert "kotlin program" not in names(text)


def test_every_name_of_a_requirement_item_is_required():
    text = (
        "# marrowbone\n\nmarrowbone renders maps.\n\n## Requirements\n\n"
        "- Go 1.22\n- PostgreSQL 16 with PostGIS 3.4\n"
    )
    got = edges(text)
    assert got[("marrowbone", "go 1.22")] == ("depends_on", "Go 1.22")
    assert got[("marrowbone", "postgresql 16")][0] == "depends_on"
    assert got[("marrowbone", "postgis 3.4")] == ("depends_on", "PostgreSQL 16 with PostGIS 3.4")


def test_items_under_a_stack_heading_are_used():
    got = edges("# plover\n\nplover tracks parcels.\n\n## Stack\n\n- Django 5\n- htmx\n")
    assert got[("plover", "django 5")][0] == "uses"
    assert got[("plover", "htmx")][0] == "uses"


def test_a_passive_after_an_adverb_names_the_projects_tool():
    text = "# quillfeather\n\nquillfeather makes thumbnails. Image resizing is now done by libvips."
    assert edges(text)[("quillfeather", "libvips")] == (
        "uses",
        "Image resizing is now done by libvips.",
    )


def test_a_passive_by_a_person_is_no_tool():
    text = "# quillfeather\n\nquillfeather makes thumbnails. Releases are handled by Wanjiru Kamau."
    assert not any(target == "wanjiru kamau" for _, target in edges(text))


def test_a_tool_after_with_when_the_verb_is_unknown():
    text = "# sedgefield\n\nsedgefield reads survey files. It charts the results with Vega-Lite."
    assert edges(text)[("sedgefield", "vega-lite")] == (
        "uses",
        "It charts the results with Vega-Lite.",
    )


def test_deployed_with_a_tool_is_deployed_by_it():
    text = "The billing service is a small Go binary, deployed with Argo CD."
    assert edges(text)[("argo cd", "billing service")][0] == "deploys"


def test_a_titled_passage_names_what_its_project_uses_without_a_verb_pattern():
    text = "# larchpod\n\nlarchpod turns notes into podcasts. Episodes are encoded as Opus."
    assert edges(text)[("larchpod", "opus")] == ("writes_to", "Episodes are encoded as Opus.")


def test_no_implied_edge_in_a_negated_or_hypothetical_sentence():
    text = (
        "# larchpod\n\nlarchpod turns notes into podcasts. It no longer bundles Opus. "
        "Maybe it should cache episodes in Valkey?"
    )
    got = edges(text)
    assert ("larchpod", "opus") not in got
    assert ("larchpod", "valkey") not in got


def test_a_release_announcement_names_its_project():
    text = (
        "Version 2.0 of Thimblewick is out. It now requires Python 3.12 and renders with Vega-Lite."
    )
    got = edges(text)
    assert got[("thimblewick", "python 3.12")][0] == "depends_on"
    assert ("thimblewick", "vega-lite") in got


def test_a_name_glossed_by_a_language_kind_is_built_with_it():
    text = "Uploads go to gullwing, a tiny Rust service that writes objects to S3."
    assert edges(text)[("gullwing", "rust")] == (
        "built_with",
        "Uploads go to gullwing, a tiny Rust service that writes objects to S3.",
    )


def test_the_participle_after_a_glossed_name_speaks_of_the_name():
    text = "We sell through Brackenshop, a storefront written in Elixir."
    got = edges(text)
    assert got[("brackenshop", "elixir")][0] == "built_with"
    assert not any(source == "storefront" for source, _ in got)


@pytest.mark.parametrize(
    ("text", "pair", "relation"),
    [
        (
            "Orders land in the raw_orders schema, which Airbyte loads every night.",
            ("airbyte", "raw_orders"),
            "writes_to",
        ),
        (
            "Reports live in ClickHouse, which Superset reads through its SQL Lab.",
            ("superset", "clickhouse"),
            "reads_from",
        ),
    ],
    ids=["loads", "reads"],
)
def test_a_relative_clause_whose_object_is_the_phrase_before_it(text, pair, relation):
    assert edges(text)[pair] == (relation, text)


def test_a_named_topic_of_a_broker_is_the_name_and_part_of_the_broker():
    text = "The checkout service publishes orders to the `orders.created` Kafka topic."
    got = edges(text)
    assert got[("checkout service", "orders.created")][0] == "publishes_to"
    assert got[("orders.created", "kafka")] == ("part_of", text)
    assert "orders.created kafka topic" not in names(text)


def test_a_passive_of_a_data_flow_verb_reads_from_its_subject():
    text = "The `daily_sales` table is read by Metabase and Superset."
    got = edges(text)
    assert got[("metabase", "daily_sales")][0] == "reads_from"
    assert got[("superset", "daily_sales")][0] == "reads_from"


def test_a_migration_gives_the_moved_thing_the_new_end():
    text = "Migrated the search worker from Elasticsearch to OpenSearch."
    got = edges(text)
    assert got[("elasticsearch", "opensearch")][0] == "replaced_by"
    assert got[("search worker", "opensearch")] == ("uses", text)
    assert ("search worker", "elasticsearch") not in got


def test_a_migration_of_a_part_in_common_words_is_the_projects():
    text = (
        "# fernhollow changelog\n\n## 3.1.0\n\n- Full-text search moved from Whoosh to Typesense."
    )
    got = edges(text)
    assert got[("whoosh", "typesense")][0] == "replaced_by"
    assert ("fernhollow", "typesense") in got


def test_a_first_person_port_is_built_with_the_new_language():
    text = "Wed\n\nported the backup script from bash to Python today."
    assert edges(text)[("backup script", "python")][0] == "built_with"


def test_names_listed_in_parentheses_are_each_an_object():
    text = "# quizzard\n\nquizzard runs benchmark suites (GSM8K, HumanEval and MMLU) nightly."
    got = edges(text)
    assert {("quizzard", n) for n in ("gsm8k", "humaneval", "mmlu")} <= set(got)
    assert "benchmark suites" not in names(text)


def test_software_on_a_named_machine_runs_on_it():
    text = "Grafana on `mon-3` stopped rendering panels again."
    assert edges(text)[("grafana", "mon-3")] == ("runs_on", text)


def test_software_on_a_framework_is_no_machine():
    assert ("kotlin", "ktor") not in edges("The API is Kotlin on Ktor, deployed twice a week.")


def test_a_readme_tagline_without_a_verb_speaks_of_the_project():
    text = "# ledgerkit\n\nAn offline-first budget tracker for Android."
    assert edges(text)[("ledgerkit", "android")] == (
        "integrates_with",
        "An offline-first budget tracker for Android.",
    )


def test_has_been_before_the_verb_keeps_the_subject():
    text = "Our mail relay, postbox, has been written in Erlang since 2019."
    assert edges(text)[("postbox", "erlang")][0] == "built_with"


def test_a_labelled_list_in_a_titled_passage_is_what_the_project_uses():
    text = "# tern\n\ntern books ferries. Under the hood: Elixir, Phoenix and Oban."
    got = edges(text)
    assert {("tern", "elixir"), ("tern", "phoenix"), ("tern", "oban")} <= set(got)
    assert got[("tern", "oban")][1] == "Under the hood: Elixir, Phoenix and Oban."


def test_itself_after_the_subject_and_a_bare_passive_of_ownership():
    text = "The billing worker itself is a plain Python 3.12 service owned by Ines Moreau."
    got = edges(text)
    assert got[("billing worker", "python 3.12")][0] == "built_with"
    assert got[("ines moreau", "billing worker")][0] == "owns"


def test_a_relative_clause_with_two_verbs_speaks_of_its_antecedent():
    text = (
        "The search API, which runs under Gunicorn and reaches Postgres through PgBouncer, is slow."
    )
    got = edges(text)
    assert got[("search api", "gunicorn")][0] == "runs_on"
    assert ("search api", "postgres") in got


def test_a_versioned_runtime_in_parentheses_and_a_proxy_in_front():
    text = "We host quotebook-api (Python 3.12) behind Caddy on a small VM."
    got = edges(text)
    assert got[("quotebook-api", "python 3.12")] == ("built_with", text)
    assert got[("quotebook-api", "caddy")] == ("depends_on", text)


def types(text: str) -> dict[str, str]:
    return {e.name.lower(): e.entity_type for e in HeuristicExtractor().extract(text).entities}


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("# plinth\n\nplinth is a small Rust library for reading FITS headers.", "library"),
        ("# plinth\n\nA command-line tool that renames photos by date.", "tool"),
        ("# plinth\n\nplinth renames photos by date.", "project"),
    ],
    ids=["is-a-library", "tagline-tool", "no-kind"],
)
def test_what_a_readme_says_its_project_is_types_it(text, kind):
    assert types(text)["plinth"] == kind


def test_a_named_topic_and_bucket_are_datasets():
    assert types("Clips are cached in a MinIO bucket, `clip-cache`.")["clip-cache"] == "dataset"
    assert types("The recorder publishes to the `clips.v1` Kafka topic.")["clips.v1"] == "dataset"


def test_an_edge_the_name_itself_gives_carries_the_sentence_that_writes_it():
    text = "Nothing else changed. Events now go to the `clips.v1` Kafka topic."
    assert edges(text)[("clips.v1", "kafka")] == (
        "part_of",
        "Events now go to the `clips.v1` Kafka topic.",
    )


def test_names_that_are_used_for_something_are_the_projects():
    text = "# mosswatch\n\nmosswatch logs moisture. Prometheus, Loki and Grafana are used for monitoring."
    got = edges(text)
    for name in ("prometheus", "loki", "grafana"):
        assert got[("mosswatch", name)] == (
            "uses",
            "Prometheus, Loki and Grafana are used for monitoring.",
        )


def test_a_noun_before_a_verb_with_the_same_preposition_is_no_verb():
    text = "# mosswatch\n\nBackground work runs on Sidekiq."
    assert edges(text)[("mosswatch", "sidekiq")][0] == "runs_on"


def test_first_person_in_a_log_of_a_project_speaks_for_the_project():
    text = (
        "Day 3 on Quillmoss.\nWe now deploy to Fly.io and I moved the cache from Redis to Valkey."
    )
    got = edges(text)
    assert got[("redis", "valkey")][0] == "replaced_by"
    assert ("quillmoss", "valkey") in got
    assert ("quillmoss", "fly.io") in got
    assert ("quillmoss", "redis") not in got


def test_data_put_into_a_store_is_written_to_it():
    text = "harvest-job loads nightly feeds into ClickHouse and archives old rows to S3."
    got = edges(text)
    assert got[("harvest-job", "clickhouse")] == ("writes_to", text)
    assert got[("harvest-job", "s3")] == ("writes_to", text)


@pytest.mark.parametrize(
    "text",
    [
        "DNS is still at Namecheap; moving it to Cloudflare would be simpler.",
        "Next: run the exporter on Fly.io.",
        "I want to try Valkey for the cache.",
    ],
    ids=["would", "next", "want-to"],
)
def test_a_wish_or_plan_states_no_relation(text):
    assert edges(text) == {}


def test_a_practice_acronym_before_a_kind_noun_keeps_the_noun():
    text = "The SMS gateway runs on AWS and sends through Twilio."
    got = edges(text)
    assert ("sms gateway", "aws") in got
    assert "sms" not in names(text)


def test_a_definite_part_in_a_product_is_part_of_it():
    text = "On Monday the churn dashboard in Metabase showed no rows."
    assert edges(text)[("churn dashboard", "metabase")] == ("part_of", text)
