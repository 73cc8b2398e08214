"""Candidates for the learned scorer (``kg.extraction.learned``): every name the rules kept, the
spans around them a boundary error would have missed, names by spelling, and for edges every
ordered pair of names in one sentence (and the passage's implied subject with each name), each
with the features a logistic model weighs.

Features are strings (a word, a shape, a rule's verdict), one-hot; they say what generalises
across domains: the words between and around a pair, the verb nearest it, spelling shapes, what
the rules proposed, distance and types. No name of a set is a feature by itself beyond the
words of the candidate, which the scorer sees only as first and last word."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

from kg.extraction.clauses import first_person_topic, glossed_topic, log_topic, release_topic
from kg.extraction.heuristic import _DOCUMENT_WORDS, _HEADING, HeuristicExtractor
from kg.extraction.lexicon import (
    DETERMINERS,
    FUNCTION_WORDS,
    HEAD_TYPES,
    NOT_NAMES,
    PRONOUNS,
    VERB_PATTERNS,
)
from kg.extraction.names import KIND_NOUNS, clean, known_type
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


def entity_features(p: Passage, key: str) -> list[str]:
    surface = p.names[key]
    words = surface.split()
    f = [
        "bias",
        f"origin={p.origin[key]}",
        f"n={min(len(words), 4)}",
        f"shape={'_'.join(_shape(w) for w in words[:3])}",
        f"shape0={_shape(words[0])}",
        f"shapeL={_shape(words[-1])}",
        f"w0={words[0].lower()}",
        f"wL={words[-1].lower()}",
    ]
    if p.origin[key] == "rule" and key in p.rule_types:
        f.append(f"rtype={p.rule_types[key]}")
    if (known := known_type(surface)) is not None:
        f.append(f"known={known}")
    if clean(surface) is None:
        f.append("refused")
    elif clean(surface).lower() != key:  # type: ignore[union-attr]
        f.append("cleaned_other")
    if len(words) == 1:
        low = words[0].lower()
        f.append(f"lex={_lex(low)}")
    else:
        first, last = words[0].lower(), words[-1].lower()
        f += [f"lex0={_lex(first)}", f"lexL={_lex(last)}|{_shape(words[0])}"]
        if first in _VERBS or first.endswith(("ing", "ed")):
            f.append("verb_first")
        if last in KIND_NOUNS or last in HEAD_TYPES:
            f.append("kind_last")
        if " of " in f" {key} ":
            f.append("of_inside")
    if surface.endswith("+"):
        f.append("plus_end")
    if p.topic and key == p.topic.lower():
        f.append("topic")
    ruled = [k for k in p.rule_types if k != key]
    if any(key in k for k in ruled):
        f.append("inside_rule_name")
    if any(k in key for k in ruled):
        f.append("holds_rule_name")
    mentions = p.mentions.get(key, [])
    f.append(f"count={min(len(mentions), 3)}")
    for m in mentions[:2]:
        words_s = p.sentences[m.sentence][1]
        before = words_s[m.first - 1].low if m.first else "<s>"
        after = words_s[m.last].low if m.last < len(words_s) else "</s>"
        f += [f"prev={before}", f"next={after}", f"nextlex={_lex(after)}"]
        if after in KIND_NOUNS or after in HEAD_TYPES:
            f.append("kind_next")
        if m.first == 0:
            f.append("sentence_first")
    if any(k in p.rule_edges for k in p.rule_edges if key in k):
        f.append("rule_edge_end")
    return f


def _nearest(mentions: list[Mention], other: Mention) -> Mention | None:
    same = [m for m in mentions if m.sentence == other.sentence]
    clear = [m for m in same if m.last <= other.first or m.first >= other.last]
    if not clear:
        return None
    return min(clear, key=lambda m: min(abs(m.first - other.last), abs(other.first - m.last)))


def _distance(n: int) -> str:
    return (
        "0"
        if n <= 0
        else "1"
        if n == 1
        else "2"
        if n == 2
        else "3-4"
        if n <= 4
        else "5-8"
        if n <= 8
        else "9+"
    )


@dataclass
class PairCandidate:
    source: str
    target: str
    sentence: int
    features: list[str]
    verb_relation: str | None


def pair_candidates(p: Passage, keys: set[str]) -> list[PairCandidate]:
    """Every ordered pair of candidate names in one sentence, and the topic with every name in
    a sentence that does not name it; each with its features."""
    out: dict[tuple[str, str], PairCandidate] = {}
    topic = p.topic.lower() if p.topic else None
    for s, (_, words) in enumerate(p.sentences):
        present = [m for k in keys for m in p.mentions.get(k, []) if m.sentence == s]
        present = sorted(present, key=lambda m: (m.first, m.last))[:MAX_MENTIONS]
        names_here = {m.key for m in present}
        masked = _masked(p, words, present)
        for m in present:
            for other in present:
                if other.key == m.key or (m.key, other.key) in out:
                    continue
                if not (m.last <= other.first or other.last <= m.first):
                    continue
                if max(m.first, other.first) - min(m.last, other.last) > MAX_GAP:
                    continue  # far apart in a long sentence: the pairs would grow as its square
                mine = _nearest([x for x in present if x.key == m.key], other) or m
                out[(m.key, other.key)] = _pair(p, mine, other, masked, present)
            if topic and topic in keys and topic not in names_here and m.key != topic:
                for pair in ((topic, m.key), (m.key, topic)):
                    if pair not in out:
                        out[pair] = _implied(p, pair, m, masked, present)
    for pair in p.rule_edges:
        if pair not in out and pair[0] in keys and pair[1] in keys:
            said = p.rule_evidence.get(pair, "")
            at = next((s for s, (text, _) in enumerate(p.sentences) if text == said), 0)
            out[pair] = PairCandidate(*pair, at, ["pbias", "rule_only", *_common(p, *pair)], None)
    return list(out.values())


_WHOLE = ("rule", "run", "topic")
_LIST_WORDS = {"<N>", ",", "and", "or", "&", "as", "well"}


def _masked(p: Passage, words: list[Word], present: list[Mention]) -> list[str]:
    """The sentence's words lower-cased, with every word of a whole name ("<N>") hidden, so
    that a pair's context is its grammar, not the names around it."""
    lows = [w.low for w in words]
    for m in present:
        if p.origin[m.key] in _WHOLE:
            for i in range(m.first, m.last):
                lows[i] = "<N>"
    return lows


def _nested(p: Passage, m: Mention, present: list[Mention]) -> bool:
    """The mention lies inside a longer whole name ("cron" in "billing cron job")."""
    return any(
        x.first <= m.first and x.last >= m.last and x.last - x.first > m.last - m.first
        for x in present
        if p.origin[x.key] in _WHOLE
    )


def _sentence_features(words: list[str]) -> list[str]:
    lows = set(words)
    f = []
    if lows & _NEGATIONS or any(w.endswith("n't") for w in words):
        f.append("negated")
    if lows & _MODALS:
        f.append("modal")
    if words and words[-1] == "?":
        f.append("question")
    if "from" in lows and "to" in lows:
        f.append("from_to")
    return f


def _pair(
    p: Passage, a: Mention, b: Mention, words: list[str], present: list[Mention]
) -> PairCandidate:
    forward = a.last <= b.first
    d = "f" if forward else "r"
    lo, hi = (a.last, b.first) if forward else (b.last, a.first)
    between = words[lo:hi]
    f = ["pbias", f"dir={d}", f"dist={_distance(len(between))}|{d}"]
    f += [f"btw={w}|{d}" for w in between[:8]]
    # What is between once other names and the commas and "and"s of a list are left out:
    # "uses React, Redux and TypeScript" relates the last name as it does the first.
    core = [w for w in between if w not in _LIST_WORDS]
    f.append(f"core={'_'.join(core[:4])}|{d}")
    if between:
        f += [f"b1={between[0]}|{d}", f"bL={between[-1]}|{d}"]
        f += [f"bb={x}_{y}|{d}" for x, y in itertools.pairwise(between)][:6]
    else:
        f.append(f"adjacent|{d}")
    first = min(a.first, b.first)
    last = max(a.last, b.last)
    f.append(f"before={words[first - 1] if first else '<s>'}|{d}")
    f.append(f"after={words[last] if last < len(words) else '</s>'}|{d}")
    if first >= 2:
        f.append(f"before2={words[first - 2]}|{d}")
    verb = next((w for w in between if w in _VERBS), None)
    if verb is None:
        verb = next((w for w in reversed(words[:first]) if w in _VERBS), None)
        f.append(f"verb_before={verb}|{d}")
    else:
        f.append(f"verb={verb}|{d}")
    inside = sum(
        1 for m in present if m.first >= lo and m.last <= hi and m.key not in (a.key, b.key)
    )
    f.append(f"names_between={min(inside, 3)}")
    if _nested(p, a, present):
        f.append("a_nested")
    if _nested(p, b, present):
        f.append("b_nested")
    f += _sentence_features(words)
    f += _common(p, a.key, b.key)
    return PairCandidate(a.key, b.key, a.sentence, f, _VERBS.get(verb) if verb else None)


def _implied(
    p: Passage, pair: tuple[str, str], m: Mention, words: list[str], present: list[Mention]
) -> PairCandidate:
    d = "it" if pair[0] != m.key else "ti"  # topic first or topic second
    before = words[: m.first]
    f = ["pbias", f"implied={d}", f"pos={_distance(m.first)}|{d}"]
    f += [f"ibtw={w}|{d}" for w in before[-6:]]
    f.append(f"iprev={before[-1] if before else '<s>'}|{d}")
    f.append(f"ifirst={before[0] if before else '<name>'}|{d}")
    verb = next((w for w in reversed(before) if w in _VERBS), None)
    f.append(f"iverb={verb}|{d}")
    f.append(f"names_before={min(sum(1 for x in present if x.last <= m.first), 3)}|{d}")
    if _nested(p, m, present):
        f.append("nested")
    f += _sentence_features(words)
    f += _common(p, *pair)
    return PairCandidate(pair[0], pair[1], m.sentence, f, _VERBS.get(verb) if verb else None)


def _end(p: Passage, key: str, side: str) -> list[str]:
    """What the pair's scorer needs to know of one end: is it a name at all."""
    surface = p.names[key]
    words = surface.split()
    f = [
        f"{side}origin={p.origin[key]}",
        f"{side}shape={_shape(words[0])}",
        f"{side}n={min(len(words), 3)}",
    ]
    cleaned = clean(surface)
    f.append(
        f"{side}clean={'refused' if cleaned is None else 'same' if cleaned.lower() == key else 'other'}"
    )
    if len(words) == 1 and words[0].islower():
        f.append(
            f"{side}lex={'noun' if english_word(key) else 'other' if plain_word(key) else 'none'}"
        )
    f.append(f"{side}last={words[-1].lower()}")
    return f


def _common(p: Passage, a: str, b: str) -> list[str]:
    ta = p.rule_types.get(a) or known_type(p.names[a]) or "?"
    tb = p.rule_types.get(b) or known_type(p.names[b]) or "?"
    f = [f"ta={ta}", f"tb={tb}", f"tt={ta}|{tb}", *_end(p, a, "a_"), *_end(p, b, "b_")]
    if (a, b) in p.rule_edges:
        f += ["rule_fwd", f"rule_fwd={p.rule_edges[(a, b)]}"]
    if (b, a) in p.rule_edges:
        f.append("rule_rev")
    if p.topic and a == p.topic.lower():
        f.append("src_topic")
    if p.topic and b == p.topic.lower():
        f.append("dst_topic")
    return f
