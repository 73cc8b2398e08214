# ruff: noqa: RUF001  (curly quotes and apostrophes are what entries contain)
"""Issue 32: a crux is short and reads as one clean sentence to the writer, whatever shape the
entry has (subjectless diary lines, quoted speech, lists, lower-case typing): the frame and the
most telling clause of each sentence it cites, in the second person, with the cited sentences
kept verbatim as its evidence."""

from __future__ import annotations

import re

import pytest

from agent.engine.compose import (
    CLAUSE_WORDS,
    FRAMES,
    MAX_WORDS,
    compose,
    invented_names,
    pieces,
)
from agent.engine.wording import second_person, tidy, with_subject

pytestmark = pytest.mark.django_db

# Entries written for these tests, each a different shape of diary writing.
ENTRIES = {
    "subjectless": (
        "Said yes to covering Lena's shift again. Third Saturday in a row. Told the manager it "
        "was fine, which it isn't, and then cried in the car park for ten minutes. Can't "
        "remember the last weekend I had to myself."
    ),
    "quoted": (
        'My brother Kofi rang and said "you never come home anymore." I told him work was '
        "mad. The truth is I'm scared that if I go back to Kumasi I'll see how much Dad has "
        "aged, and I don't know what I'd say to him."
    ),
    "list": (
        "things i didn't do today:\n"
        "- reply to Hanna about the flat\n"
        "- finish the portfolio, redid the cover page four times\n"
        "- eat a proper meal\n"
        "it has to be perfect before anyone at the studio sees it"
    ),
    "lower_case": (
        "i keep thinking about grandma's kitchen in gdansk. the house sold last month and i "
        "wasn't even there, i was at work pretending everything was normal. miss her so much "
        "and i never said goodbye properly"
    ),
    "long_clauses": (
        "Every Monday I promise myself I'll finally ask Mr Okafor for the team lead role, and "
        "every Monday I sit at my desk rehearsing it until the moment has passed, because if "
        "he says no then everyone will know I wanted it and wasn't good enough. Jonas got "
        "the last opening without even applying."
    ),
}

FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|I'll|I'd|i|im|my|me|mine|myself)\b", re.IGNORECASE)
QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”")
DOUBLED = re.compile(r"[,;:.!?]\s*[,;:.!?]")
SECOND = {
    "you",
    "you're",
    "your",
    "yours",
    "yourself",
    "you've",
    "you'd",
    "you'll",
    "were",
    "weren't",
    "are",
}


def _body(text: str, archetype: str) -> str:
    assert text.startswith(FRAMES[archetype] + ": "), text
    return text[len(FRAMES[archetype]) + 2 :]


@pytest.mark.parametrize("shape", sorted(ENTRIES))
@pytest.mark.parametrize("archetype", sorted(FRAMES))
def test_a_crux_is_short_clean_second_person_and_grounded(shape, archetype):
    entry = ENTRIES[shape]
    crux = compose(entry, archetype)
    text = crux.text
    assert len(text.split()) <= MAX_WORDS, text
    assert text.endswith(".") and text.count(".") == 1, text  # one sentence, one full stop
    assert not DOUBLED.search(text.replace("'.", "").replace("”.", "").replace('".', "")), text
    body = _body(text, archetype)
    for clause in body.rstrip(".").split("; "):
        first = clause.split()[0].lower()
        assert first not in ("and", "but", "so", "or", "because", "then"), text
    assert not FIRST_PERSON.search(QUOTED.sub("", body)), text
    assert crux.spans and all(span in entry for span in crux.spans)  # cited verbatim
    assert invented_names(text, entry) == []
    # Every word the crux shows of the entry is the entry's (only the pronouns are turned).
    lowered = entry.lower().replace("’", "'")
    for word in re.findall(r"[\w']+", body.lower()):
        assert word in SECOND or re.search(rf"\b{re.escape(word)}\b", lowered), (word, text)


def test_a_subjectless_diary_sentence_gets_the_writer_as_its_subject():
    entry = ENTRIES["subjectless"]
    assert with_subject("Said yes to covering Lena's shift again", "", "") == (
        "you said yes to covering Lena's shift again"
    )
    assert with_subject("Can't remember the last weekend", "", "") == (
        "you can't remember the last weekend"
    )
    assert with_subject("tired of all of it", "", "") == "you're tired of all of it"
    assert with_subject("Lena said thanks", "", "") == "Lena said thanks"
    # Irregular past tenses, with a prefix too.
    assert with_subject("Rewrote the cover letter twice", "", "") == (
        "you rewrote the cover letter twice"
    )
    assert with_subject("Overslept and missed the 8:10", "", "") == (
        "you overslept and missed the 8:10"
    )
    assert with_subject("Drove to Mum's after work", "", "") == "you drove to Mum's after work"
    assert with_subject("Reading the report on the bus", "", "") == "Reading the report on the bus"
    crux = compose(entry, "boundaries")
    assert "you said yes to covering Lena's shift again" in crux.text, crux.text


def test_a_first_person_sentence_turns_to_the_second_person():
    entry = "I said yes to the Thursday rota. My manager asked me twice and I never say no."
    crux = compose(entry, "boundaries")
    assert "you said yes to the Thursday rota" in crux.text, crux.text
    assert not FIRST_PERSON.search(crux.text), crux.text


def test_lower_case_typing_turns_too():
    crux = compose(ENTRIES["lower_case"], "grief_loss")
    assert not FIRST_PERSON.search(crux.text), crux.text
    assert "you" in crux.text.split(":", 1)[1], crux.text


def test_a_long_sentence_shows_its_most_telling_clause_and_cites_the_sentence():
    entry = ENTRIES["long_clauses"]
    crux = compose(entry, "fear_of_failure")
    body = _body(crux.text, "fear_of_failure").rstrip(".")
    for clause in body.split("; "):
        assert len(clause.split()) <= CLAUSE_WORDS, crux.text
    # The citation is the entry's words (a sentence or a clause), longer than what is shown.
    assert all(span in entry for span in crux.spans)
    assert sum(len(s.split()) for s in crux.spans) > len(body.split())


def test_clauses_never_start_with_a_conjunction_nor_break_a_quotation():
    # Longer than CLAUSE_WORDS, so it is cut into clauses.
    span = (
        "Mum said on the phone last night 'you can't keep moving it forever, Priya,' and I "
        "cannot picture a Monday off."
    )
    found = pieces(span)
    assert "I cannot picture a Monday off." in found
    assert all(not p.lower().startswith(("and ", "but ")) for p in found), found
    assert all(p.count("'") != 1 for p in found if "Mum" in p), found
    assert not any(p.startswith("Priya") for p in found), found


def test_a_clause_cut_from_a_sentence_is_never_a_fragment():
    span = (
        "I failed the end of year exam again last Tuesday morning because of the maths test, "
        "and then I hid it from Dad for a week."
    )
    found = pieces(span)
    assert "of the maths test" not in found, found
    assert not any(p.split()[0].lower() in ("of", "for", "from", "to") for p in found), found


def test_a_clause_without_a_subject_of_its_own_is_not_shown_alone():
    entry = (
        "I spent the whole evening after work furious, mostly at myself, because I never say "
        "no to anyone. Told Priya it was fine, which is a lie."
    )
    for archetype in FRAMES:
        text = compose(entry, archetype).text
        for clause in _body(text, archetype).rstrip(".").split("; "):
            assert not clause.startswith(("mostly", "which")), text


def test_tidy_leaves_no_doubled_or_dangling_punctuation():
    assert tidy("you told him 'I'm fine.'") == "you told him 'I'm fine'"
    assert tidy("you said no!!") == "you said no"
    assert tidy(", and then,, nothing;") == "and then, nothing"


def test_a_list_entry_cites_its_items():
    entry = ENTRIES["list"]
    crux = compose(entry, "perfectionism")
    assert crux.spans and all(span in entry for span in crux.spans)
    assert all("\n" not in span for span in crux.spans)


@pytest.mark.parametrize(
    ("span", "shown"),
    [
        # "My" inside a name the writer wrote stays as written; the writer's own "my" turns.
        ("I checked Find My Phone six times before lunch", "you checked Find My Phone six times"),
        ("Dad still plays My Way at every birthday", "Dad still plays My Way at every birthday"),
        ("My sister rang twice about the flat", "your sister rang twice about the flat"),
        ("Things I've sorted today: the boiler", "Things you've sorted today: the boiler"),
    ],
)
def test_a_name_with_my_in_it_is_not_turned_to_the_second_person(span: str, shown: str) -> None:
    assert second_person(span, span).startswith(shown)


def test_the_words_a_crux_addresses_the_writer_with_are_not_invented_names() -> None:
    entry = "Ben asked me to cover Saturday again. I said yes before he finished."
    crux = "You can't say no to Ben. You said yes before he finished; Your weekends go."
    assert invented_names(crux, entry) == []
    assert invented_names("You covered for Priya again.", entry) == ["Priya"]
