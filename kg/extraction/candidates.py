"""Candidates for the learned scorer (``kg.extraction.learned``): every name the rules kept, the
spans around them a boundary error would have missed, names by spelling, and for edges every
ordered pair of names in one sentence (and the passage's implied subject with each name). The
features a logistic model weighs for each are in :mod:`kg.extraction.features`.

Features are strings (a word, a shape, a rule's verdict), one-hot; they say what generalises
across domains: the words between and around a pair, the verb nearest it, spelling shapes, what
the rules proposed, distance and types. No name of a set is a feature by itself beyond the
words of the candidate, which the scorer sees only as first and last word."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kg.extraction.clauses import first_person_topic, glossed_topic, log_topic, release_topic
from kg.extraction.heuristic import _DOCUMENT_WORDS, _HEADING, HeuristicExtractor
from kg.extraction.lexicon import (
    DETERMINERS,
    FUNCTION_WORDS,
    NOT_NAMES,
    PRONOUNS,
    VERB_PATTERNS,
)
from kg.extraction.names import clean, known_type
from kg.extraction.nouns import english_word, plain_word
from kg.extraction.phrases import is_technical, sentence_spans, strip_sources
from kg.extraction.types import Extraction

_WORD = re.compile(r"[\w@`][\w\-.'’+#/`]*[\w+#`]|[\w]|[^\w\s]")  # noqa: RUF001
_VERSION = re.compile(r"v?\d+(?:\.\d+)*\+?|\d+[bB]|LTS", re.IGNORECASE)
_OWNERS = {"the", "our", "its", "my", "their", "your", "his", "her"}
_NEGATIONS = {"not", "no", "never", "without", "n't", "instead", "longer", "dropped", "removed"}
_MODALS = {"would", "could", "should", "might", "may", "maybe", "eventually", "want", "plan"}
_VERBS: dict[str, str] = {}
for _p in VERB_PATTERNS:
    if len(_p.words) == 1:
        _VERBS.setdefault(_p.words[0], _p.relation)
MAX_RUN = 5
MAX_GAP = 24  # words between the two names of a pair
MAX_MENTIONS = 60  # names of one sentence that pair up


def passage_topic(text: str) -> str | None:
    """The passage's implied subject as the rules find it: a heading's title, a log's,
    release's, gloss's or first-person note's subject."""
    heading = _HEADING.search(text)
    title = _DOCUMENT_WORDS.sub("", heading.group(1)) if heading else ""
    if heading and clean(title):
        return title
    return log_topic(text) or release_topic(text) or glossed_topic(text) or first_person_topic(text)


@dataclass
class Word:
    text: str
    start: int
    end: int

    @property
    def low(self) -> str:
        return self.text.lower()


@dataclass
class Mention:
    key: str  # the candidate's lower-case name
    sentence: int
    first: int  # word indices in the sentence, end exclusive
    last: int


@dataclass
class Passage:
    """One passage read once: the rules' output, its sentences as words, the topic, and the
    entity candidates with their mentions."""

    text: str
    rules: Extraction
    topic: str | None
    sentences: list[tuple[str, list[Word]]]
    names: dict[str, str] = field(default_factory=dict)  # key -> surface
    origin: dict[str, str] = field(default_factory=dict)  # key -> how it was proposed
    mentions: dict[str, list[Mention]] = field(default_factory=dict)
    rule_types: dict[str, str] = field(default_factory=dict)
    rule_edges: dict[tuple[str, str], str] = field(default_factory=dict)
    rule_evidence: dict[tuple[str, str], str] = field(default_factory=dict)


def _lex(low: str) -> str:
    """Which English word list holds the word: a noun, another word, or none (a name?)."""
    if not low.isalpha():
        return "mark"
    return "noun" if english_word(low) else "other" if plain_word(low) else "none"


def _shape(word: str) -> str:
    out: list[str] = []
    for c in word:
        s = "X" if c.isupper() else "x" if c.isalpha() else "d" if c.isdigit() else c
        if not out or out[-1] != s:
            out.append(s)
    return "".join(out)[:6]


def _name_word(word: str, first: bool) -> bool:
    low = word.lower()
    if not any(c.isalnum() for c in word) or low in FUNCTION_WORDS or low in PRONOUNS:
        return False
    if low in DETERMINERS or low in NOT_NAMES:
        return False
    if is_technical(word) or known_type(word) is not None:
        return True
    if low in _VERBS and word.islower():
        return False  # "the frontend uses": a relation's verb, not part of a name
    if word[:1].isupper():
        return True
    if "-" in word or "_" in word or "/" in word or "`" in word:
        return True
    return word.isalpha() and not english_word(low) and not plain_word(low) and len(low) > 2


def read_passage(text: str, extractor: HeuristicExtractor) -> Passage:
    text = strip_sources(text)
    rules = extractor.extract(text)
    topic = passage_topic(text)
    sentences = []
    for a, b in sentence_spans(text):
        words = [Word(m.group(), a + m.start(), a + m.end()) for m in _WORD.finditer(text[a:b])]
        sentences.append((text[a:b], words))
    p = Passage(text, rules, topic, sentences)
    for e in rules.entities:
        p.names.setdefault(e.name.lower(), e.name)
        p.origin[e.name.lower()] = "rule"
        p.rule_types[e.name.lower()] = e.entity_type
    for g in rules.edges:
        p.rule_edges[(g.source.lower(), g.target.lower())] = g.rel_type
        p.rule_evidence[(g.source.lower(), g.target.lower())] = g.evidence
    if topic and topic.lower() not in p.names:
        p.names[topic.lower()] = topic
        p.origin[topic.lower()] = "topic"
    for _, words in sentences:
        _spans(p, words)
    _find_mentions(p)
    return p


def _spans(p: Passage, words: list[Word]) -> None:
    """Runs of name-like words (a version after a name joins it) and their sub-spans; "the"
    and a possessive before two or three plain words (a named component)."""
    i = 0
    while i < len(words):
        if not _name_word(words[i].text, i == 0):
            if words[i].low in _OWNERS:
                _component(p, words, i + 1)
            i += 1
            continue
        j = i + 1
        while (
            j < len(words)
            and j - i < MAX_RUN
            and (_name_word(words[j].text, False) or _VERSION.fullmatch(words[j].text))
        ):
            j += 1
        for a in range(i, j):
            for b in range(a + 1, j + 1):
                _add(p, words, a, b, "run" if (a, b) == (i, j) else "part")
        i = j


def _component(p: Passage, words: list[Word], i: int) -> None:
    j = i
    while j < len(words) and j - i < 3 and words[j].text.isalpha() and words[j].text.islower():
        if words[j].low in FUNCTION_WORDS or words[j].low in PRONOUNS:
            break
        j += 1
    if j - i >= 2:
        _add(p, words, i, j, "owned")


def _add(p: Passage, words: list[Word], a: int, b: int, how: str) -> None:
    surface = p.text[words[a].start : words[b - 1].end].strip("`'\"")
    surface = surface.removesuffix("'s").removesuffix("’s").removeprefix("@")  # noqa: RUF001
    if len(surface) < 2 or not any(c.isalpha() for c in surface):
        return
    if _VERSION.fullmatch(surface):
        return
    key = surface.lower()
    if key not in p.names:
        p.names[key] = surface
        p.origin[key] = how


def _find_mentions(p: Passage) -> None:
    """Where each candidate is written, found through an index of each word's positions, so a
    long passage costs its matches rather than candidates times words."""
    lows = [[_bare(w.low) for w in words] for _, words in p.sentences]
    starts: dict[str, list[tuple[int, int]]] = {}
    for s, sentence in enumerate(lows):
        for i, low in enumerate(sentence):
            starts.setdefault(low, []).append((s, i))
    for key in p.names:
        toks = [_bare(m.group().lower()) for m in _WORD.finditer(key)]
        n = len(toks)
        p.mentions[key] = (
            [
                Mention(key, s, i, i + n)
                for s, i in starts.get(toks[0], [])
                if toks and lows[s][i : i + n] == toks
            ]
            if toks
            else []
        )


def _bare(low: str) -> str:
    return low.strip("`'\"").removesuffix("'s").removesuffix("’s").removeprefix("@")  # noqa: RUF001
