"""Which lone lower-case words are ordinary English nouns ("retries", "payments", "backend"), from
a word list shipped with the code (``data/common_nouns.txt``, taken from TextBlob's MIT-licensed
lexicon; provenance in ``data/COMMON_NOUNS_LICENSE.txt``). Read once from disk, never downloaded.

A moderator rejects such a word as a node unless the writer marked it as a name: in backticks
("the `renders` queue") or set apart by a noun that says what it is ("the `sessions` table")."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from kg.extraction.around import between
from kg.extraction.gazetteer import KNOWN_TYPES
from kg.extraction.lexicon import HEAD_TYPES

_DOCUMENT = r"(?:changelog|change log|release notes|readme|docs)"
# "three internal services: pricing, inventory and fulfillment": the writer introduces each
# listed word as the name of one such thing.
_PLURAL_KINDS = (
    r"services|workers|jobs|components|apps|queues|topics|tables|modules|repos|buckets"
    r"|databases|containers|plugins|microservices|daemons|packages|crates"
)
_DATA = Path(__file__).resolve().parent / "data" / "common_nouns.txt"
_OTHER = Path(__file__).resolve().parent / "data" / "other_words.txt"


@lru_cache(maxsize=1)
def _nouns() -> frozenset[str]:
    lines = _DATA.read_text(encoding="utf-8").splitlines()
    return frozenset(w for w in lines if w and not w.startswith("#"))


@lru_cache(maxsize=1)
def _other_words() -> frozenset[str]:
    lines = _OTHER.read_text(encoding="utf-8").splitlines()
    return frozenset(w for w in lines if w and not w.startswith("#"))


def plain_word(name: str) -> bool:
    """One lower-case English word of any other kind ("almost", "fine", "evaluated"), from the
    same lexicon (``data/other_words.txt``), that the gazetteer does not know as a name."""
    return name.isalpha() and name.islower() and name in _other_words() and name not in KNOWN_TYPES


def common_noun(name: str) -> bool:
    """One lower-case word the lexicon knows as a common noun and the gazetteer not as a name.
    Head nouns that say a type and nouns for a doer ("indexer", "importer", "scheduler") are
    left to the rules that read them as a part of the passage's project."""
    return (
        name.isalpha()
        and name.islower()
        and name in _nouns()
        and name not in HEAD_TYPES
        and not name.endswith(("er", "or"))
        and name not in KNOWN_TYPES
    )


def marked_as_name(name: str, text: str) -> bool:
    """The writer set the word apart: backticks or quotes around it, an ``@`` handle, a heading
    of its own ("# tidewater"), or a place in a list after a plural kind ("services: pricing")."""
    return (
        between(name, text, _MARK, _BOUNDARY)
        or between(name, text, _LISTED_BEFORE, _BOUNDARY, edge_before=True, ignore_case=True)
        or between(name, text, _HEADING_BEFORE, _HEADING_AFTER, ignore_case=True)
    )


_MARK = re.compile(r"[`'\"@]\Z")
_BOUNDARY = re.compile(r"\b")
_LISTED_BEFORE = re.compile(rf"\b(?:{_PLURAL_KINDS}):[^.:\n]*?\Z", re.IGNORECASE)
_HEADING_BEFORE = re.compile(r"^#+[ \t]*\Z", re.M | re.I)
_HEADING_AFTER = re.compile(rf"(?:[ \t]+{_DOCUMENT})?[ \t]*$", re.M | re.I)


def english_word(word: str) -> bool:
    """In the noun list at all (a lower-case word), whatever the gazetteer says."""
    return word in _nouns()
