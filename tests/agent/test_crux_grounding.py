"""Issue 32: the crux speaks to the writer about their entry, in the second person, cites the
entry's own sentences verbatim, and names nothing the entry does not name."""

from __future__ import annotations

import re

import pytest

from agent.engine.archetypes import ARCHETYPES
from agent.engine.beliefs import embed
from agent.engine.compose import (
    FRAMES,
    MAX_WORDS,
    SPAN_WORDS,
    compose,
    invented_names,
    options,
    rank_spans,
)
from agent.engine.wording import second_person
from legacymind.providers.embeddings import get_provider
from tests.agent.conftest import BOUNDARIES_ENTRY, act, init

pytestmark = pytest.mark.django_db

# Entries written for these tests (not from any development set), one per line of life.
ENTRIES = {
    "grief_loss": (
        "It's a year since Grandad Tomasz died. I still set out two cups on Sunday mornings. "
        "My sister Ola says I should clear his shed, but I'm not ready. I miss the smell of "
        "his pipe in the hallway."
    ),
    "fear_of_failure": (
        "The bakery in Leith has a stall free at the Saturday market. I've had the recipes "
        "ready since March. What if I set it up and nobody buys a single loaf? I keep telling "
        "Priya I'll apply next month, and next month never comes."
    ),
    "burnout": (
        "Third double shift this week at St Anne's. I'm so tired I forgot my own PIN at the "
        "till. Weekends are just sleeping and laundry now. I can't think about anything but "
        "the rota."
    ),
    "loneliness": (
        "Moved to Dundee in August for the job. Nobody here knows me yet. I eat dinner alone "
        "most nights and talk to the cat more than to anyone. Mum calls on Sundays and I "
        "pretend it's all fine."
    ),
    "resentment_fairness": (
        "Marcus got the promotion. I wrote half of the Hargreaves proposal and he presented it "
        "as his. Nobody thanked me. I've worked there six years and I'm still on the same pay."
    ),
}

FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|I'll|I'd|my|me|mine|myself)\b")
QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”")


SECOND = {
    "you",
    "you're",
    "your",
    "yourself",
    "you've",
    "you'd",
    "you'll",
    "were",
    "weren't",
    "are",
}


def _words(text: str) -> set[str]:
    return set(re.findall(r"[\w']+", text.lower().replace("\u2019", "'")))


def _outside_quotes(text: str) -> str:
    return QUOTED.sub("", text)


@pytest.mark.parametrize("archetype", sorted(ENTRIES))
def test_crux_is_second_person_grounded_and_invents_no_names(archetype):
    entry = ENTRIES[archetype]
    crux = compose(entry, archetype)
    assert crux.text.startswith(FRAMES[archetype])
    assert re.search(r"\b(?:you|your|you're|you've)\b", crux.text, re.IGNORECASE)
    assert not FIRST_PERSON.search(_outside_quotes(crux.text)), crux.text
    assert crux.spans and all(span in entry for span in crux.spans)
    assert invented_names(crux.text, entry) == []
    assert len(crux.text.split()) <= MAX_WORDS  # short: a frame and two short clauses


def test_every_archetype_composes_a_grounded_crux_for_any_entry():
    entry = ENTRIES["loneliness"]
    for archetype in ARCHETYPES:
        crux = compose(entry, archetype.key)
        assert all(span in entry for span in crux.spans)
        assert invented_names(crux.text, entry) == []


def test_a_crux_is_one_complete_sentence_whatever_the_length_of_the_sentences_it_cites():
    """A long sentence is cited by its clauses, never cut mid-phrase; the crux shows each cited
    span whole or its most telling clause, in at most MAX_WORDS words."""
    long_tail = (
        "I can't say no to anyone and I always say yes. On Sunday I drove my cousin to the "
        "airport and then helped my neighbour carry his new sofa up four flights of stairs in "
        "the rain, because he asked and I never hold the line when someone asks."
    )
    for entry in (long_tail, BOUNDARIES_ENTRY):
        crux = compose(entry, "boundaries")
        text = crux.text
        assert text.endswith(".") and not text.endswith("..") and "…" not in text, text
        assert text.count(".") == 1 and text.startswith(FRAMES["boundaries"] + ": "), text
        assert all(len(span.split()) <= SPAN_WORDS and span in entry for span in crux.spans)
        assert len(text.split()) <= MAX_WORDS, text
        for part in text.split(": ", 1)[1].rstrip(".").split("; "):  # a clause of a cited span
            assert any(_words(part) - SECOND <= _words(span) for span in crux.spans), part


def test_second_person_rephrasing():
    assert second_person("I'm angry at myself for having no limits.") == (
        "you're angry at yourself for having no limits"
    )
    assert second_person("My sister asked me again, and I said yes.") == (
        "your sister asked you again, and you said yes"
    )
    assert second_person("I am not ready and I was never asked.") == (
        "you are not ready and you were never asked"
    )
    # Quoted speech is someone else's: it is left as written.
    assert (
        second_person('Mum said "I love you" and I cried.') == 'mum said "I love you" and you cried'
    )


def test_a_cited_span_opening_a_sentence_with_a_common_word_is_lowered():
    """The entry writes "His" only at a sentence's start, which alone would read as a name;
    after the semicolon that joins two cited spans it is lowered. A name still keeps its
    capital."""
    entry = "Dad died in March. His reading glasses are still on the shelf. Every time I dust."
    assert second_person("His reading glasses are still on the shelf.", entry) == (
        "his reading glasses are still on the shelf"
    )
    assert second_person("Every time I dust.", entry) == "every time you dust"
    assert second_person("Dad died in March.", entry) == "Dad died in March"


def test_a_name_keeps_its_capital_and_names_are_checked_against_the_entry():
    entry = ENTRIES["resentment_fairness"]
    assert second_person("Marcus got the promotion.", entry) == "Marcus got the promotion"
    assert invented_names("You feel Marcus and Jane got credit.", entry) == ["Jane"]


def test_quick_options_are_the_cruxes_the_agent_would_confirm():
    entry = ENTRIES["fear_of_failure"]
    archetypes = ["fear_of_failure", "control_uncertainty"]
    offered = options(entry, archetypes)
    assert offered is not None and len(set(offered)) == 2
    for option, archetype in zip(offered, archetypes, strict=True):
        assert option == compose(entry, archetype).text
        assert option.startswith(FRAMES[archetype] + ": ")
        assert invented_names(option, entry) == []


def test_seeds_rest_on_different_sentences():
    from agent.engine.beliefs import seed_nodes

    for entry in ENTRIES.values():
        nodes = seed_nodes(entry)
        cited = [tuple(sorted(compose(entry, n.archetype).spans)) for n in nodes]
        assert 2 <= len(nodes) <= 4
        assert len(set(cited)) == len(cited), cited


def _play(client, text: str) -> dict:
    data = init(client, text)
    while not data["complete"]:
        action = data["action"]
        event = None
        if action["type"] == "AskUser":
            assert action["quick_options"][-1] == "Not sure / something else"
            event = {"answer_to": action["action_id"], "value": action["quick_options"][0]}
        response = act(client, {"mode": "continue", "state": data["state"], "user_event": event})
        assert response.status_code == 200, response.content
        data = response.json()
    return data


@pytest.mark.parametrize("archetype", ["grief_loss", "resentment_fairness"])
def test_api_returns_the_cited_spans(client, archetype):
    entry = ENTRIES[archetype]
    result = _play(client, entry)["result"]
    crux = result["confirmed_crux"]
    assert crux["evidence_spans"]
    assert all(span in entry for span in crux["evidence_spans"])
    assert crux["text"].startswith(tuple(FRAMES.values()))
    assert invented_names(crux["text"], entry) == []
    for theme in result["secondary_themes"]:
        assert all(span in entry for span in theme["evidence_spans"])
        assert invented_names(theme["text"], entry) == []


def test_options_shown_in_the_api_quote_the_entry(client):
    entry = ENTRIES["fear_of_failure"]
    data = init(client, entry)
    while not data["complete"] and data["action"]["type"] != "AskUser":
        data = act(client, {"mode": "continue", "state": data["state"], "user_event": None}).json()
    if data["complete"]:
        pytest.skip("the agent stopped without asking")
    substantive = data["action"]["quick_options"][:-1]
    assert all(o.startswith(tuple(s + ": " for s in FRAMES.values())) for o in substantive)
    assert all(invented_names(o, entry) == [] for o in substantive)


def test_engine_embeddings_keep_order_and_repeats_and_match_the_provider():
    texts = ["a new sentence about the shed", "Grandad's pipe", "a new sentence about the shed"]
    rows = embed(texts)
    assert rows.shape[0] == 3
    assert (rows[0] == rows[2]).all()
    fresh = get_provider().embed(texts[:2])
    assert abs(rows[:2] - fresh).max() < 1e-5
    # Known and new texts together: the known rows are the ones given before.
    again = embed(["Grandad's pipe", "another sentence never seen"])
    assert (again[0] == rows[1]).all() and again.shape[0] == 2


def test_spans_ranked_with_some_avoided_are_ranked_as_without_them():
    entry = ENTRIES["grief_loss"]
    ranked = rank_spans(entry, "grief_loss")
    assert rank_spans(entry, "grief_loss", avoid=ranked[:1]) == ranked[1:]
