"""Names no built-in list holds, recognised by their spelling and their place in the sentence
(fresh prose names things no list knows). The passages and names are made up for these tests:
none of the names is in the extractor's lists."""

from __future__ import annotations

import pytest

from kg.extraction.entity_types import software_type
from kg.extraction.heuristic import HeuristicExtractor
from kg.extraction.names import known_type


def _run(text: str):
    got = HeuristicExtractor().extract(text)
    return (
        {e.name: e.entity_type for e in got.entities},
        {(e.source, e.target): (e.rel_type, e.evidence) for e in got.edges},
    )


@pytest.mark.parametrize("name", ["ZentaDB", "flimbo", "Quorvex", "Trindle2", "grastle"])
def test_the_made_up_names_are_in_no_list(name):
    assert known_type(name) is None


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("ZentaDB", "technology"),  # CamelCase
        ("Trindle2", "technology"),  # letters and digits
        ("flimbo", "library"),  # lower case, in no English word list
        ("Quorvex", "technology"),  # capitalised, in no English word list
        ("Readings", None),  # an English word's plural
        ("retries", None),
        ("Firmware", None),  # a word of software writing, not a product
        ("Thursday", None),
        ("Kasia Nowak", None),  # two plain capitalised words: maybe a person
        ("SMS", None),  # an acronym for a practice
        ("ZentaDB API", None),  # a kind noun after the name
        ("AccessDenied", None),  # an error's code
    ],
)
def test_software_type_by_spelling(name, expected):
    assert software_type(name) == expected


def test_an_opening_capital_says_nothing():
    assert software_type("Quorvex", initial=True) is None


def test_unlisted_names_complete_a_titled_projects_relations():
    text = (
        "# pondweed\n\npondweed is a feed reader for the terminal. It keeps every article in "
        "ZentaDB and renders pages with flimbo."
    )
    names, edges = _run(text)
    assert names["ZentaDB"] == "technology"
    assert names["flimbo"] == "library"
    # The verb says the relation ("keeps ... in"), not a default "uses".
    assert edges[("pondweed", "ZentaDB")][0] == "stores_in"
    assert ("pondweed", "flimbo") in edges
    sentence = "It keeps every article in ZentaDB and renders pages with flimbo."
    assert edges[("pondweed", "ZentaDB")][1] == sentence


def test_unlisted_names_after_passives_and_reading_verbs():
    names, edges = _run(
        "# ketchwire\n\nA small relay for sensor readings. Readings are stored in Quorvex, "
        "and the dashboard is built with Trindle2."
    )
    assert edges[("ketchwire", "Quorvex")][0] == "stores_in"
    assert edges[("ketchwire", "Trindle2")][0] == "built_with"
    assert "Readings" not in names
    names, edges = _run(
        "# saltmere\n\nsaltmere reads orders from Brindlecast and writes invoices to `ledgerd`."
    )
    assert edges[("saltmere", "Brindlecast")][0] == "reads_from"
    assert edges[("saltmere", "ledgerd")][0] == "writes_to"


def test_a_dependency_named_by_its_spelling_alone():
    _, edges = _run("# marrowbyte\n\nmarrowbyte is a tiny CLI. It depends on grastle for parsing.")
    assert edges[("marrowbyte", "grastle")][0] == "depends_on"


def test_an_error_code_or_a_person_completes_no_relation():
    _, edges = _run(
        "# tarnhold\n\nThe backup job fails with `AccessDenied` since Tuesday. "
        "Releases are handled by Kasia Nowak."
    )
    assert not any(target in ("AccessDenied", "Kasia Nowak") for _, target in edges)


@pytest.mark.parametrize(
    "text",
    [
        "## Mondays\n\nThe sync job runs on Fridays and posts to Zulip.",
        "Q4 planning: the billing team moves invoices to Quorvex by UTC+13 midnight.",
        "Release 4.6 of Trindle2 is out. Requires ZentaDB 2.3 and flimbo.",
    ],
)
def test_dates_labelled_versions_and_a_leading_verb_are_no_names(text):
    names, _ = _run(text)
    low = {n.lower() for n in names}
    for bad in ("mondays", "fridays", "q4", "utc+13", "release 4.6 of trindle2"):
        assert bad not in low, names
    assert not any(n.lower().startswith("requires") for n in names), names
