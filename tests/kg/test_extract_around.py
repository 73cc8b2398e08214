"""A name's context, found without compiling a pattern per name, is what the pattern with the
name spliced in would find."""

from __future__ import annotations

import itertools
import re

import pytest

from kg.extraction.around import between, starts, starts_ignoring_case
from kg.extraction.entity_types import context_type, person_cue
from kg.extraction.finish import only_in_commands

TEXTS = [
    "Thanks to Ana for the review. Ana Lima said the `renders` queue is fine.",
    "services: pricing, inventory and fulfillment. tables:fct_orders",
    "We moved off host web-1 to the cluster 'prod-eu-1'.",
    "Ana's patch landed; Anatole reviewed it. cc Ana\nAna, who leads infra, joined Cobblestone.",
    "Run `tern sync --all`. Then $PGHOST and ${api_key} are read. Ünïcode team, \u017ftate table",  # long s: re.IGNORECASE matches it with "s"
    "# tidewater changelog\nThe data catalog at Brightwave's data catalog",
]
NAMES = ["Ana", "ana", "Ana Lima", "renders", "pricing", "fct_orders", "web-1", "prod-eu-1",
         "PGHOST", "api_key", "Ünïcode", "state", "STATE", "tidewater", "data catalog", "tern"]  # fmt: skip
SPLICED = [
    (r"\b(?i:thanks to|cc|by)\s+", r"\b", 0),
    (r"\b", r"(?:'s|\u2019s)?\s+(?:said|reviewed|patch|team)\b|\s*(?:,\s*who\b|\(@)", 0),
    (r"(?i:\b(?:services|tables)):[^.:\n]*?[`'\"]?", "", 0),
    (r"(?i:\b(?:hosts?|clusters?))\s+[`'\"]?", "", 0),
    ("", r"[`'\"]?\s+(?i:(?:tables?|queues?)\b)", 0),
    (r"\$\{?", r"\b", 0),
    (r"^#+[ \t]*", r"(?:[ \t]+changelog)?[ \t]*$", re.M | re.I),
    (r"(?:\b(?i:the|our)|['\u2019]s)\s+", r"\b", 0),
    (r"[`'\"@]", r"\b", re.I),
]


@pytest.mark.parametrize(("before", "after", "flags"), SPLICED)
def test_between_finds_what_the_spliced_pattern_finds(before: str, after: str, flags: int) -> None:
    edge = before.endswith(r"\b") and not before.endswith(r"\\b")
    head = before[:-2] if edge else before
    pre = re.compile(f"(?:{head})\\Z", flags) if head else None
    post = re.compile(after, flags) if after else None
    for name, text in itertools.product(NAMES, TEXTS):
        pattern = f"(?:{before}){re.escape(name)}(?:{after})"
        spliced = re.search(pattern, text, flags) is not None
        found = between(name, text, pre, post, edge_before=edge, ignore_case=bool(flags & re.I))
        assert found == spliced, (name, text)


def test_occurrences_overlap_and_follow_ignorecase() -> None:
    assert list(starts("aa", "aaaa")) == [0, 1, 2]
    for name, text in itertools.product(NAMES, TEXTS):
        expected = [m.start() for m in re.finditer(f"(?={re.escape(name)})", text, re.I)]
        assert list(starts_ignoring_case(name, text)) == expected


def test_the_rules_read_the_context_around_the_name() -> None:
    assert person_cue("Ana", TEXTS[0]) and person_cue("Ana", "Ana, who leads infra")
    assert not person_cue("Anatole", "Thanks to Ana for the review.")
    assert context_type("pricing", TEXTS[1]) == "service"
    assert context_type("fct_orders", "read from the table `fct_orders`") == "dataset"
    assert context_type("web-1", TEXTS[2]) == "component"
    assert only_in_commands("tern", "Run `tern sync --all`.")
    assert not only_in_commands("TERN", "Run `tern sync`. TERN is small.")
