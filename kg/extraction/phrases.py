"""Words, sentences and noun phrases for the heuristic extractor: tokenising, and finding the
phrase before or after a relation verb."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from kg.extraction.gazetteer import KNOWN_TYPES
from kg.extraction.lexicon import (
    ARROWS,
    DETERMINERS,
    FUNCTION_WORDS,
    NOT_NAMES,
    PRONOUNS,
    VERBS_BY_FIRST,
    VerbPattern,
)

_LINE = re.compile(r"[^\n]+")
_TOKEN = re.compile(r"-->|->|=>|→|[\w][\w\-.'’+#/]*[\w+#]|[\w]|[&,;:.!?()\"“”]|(?<=\s)\+(?=\s)")  # noqa: RUF001
# Citations a synthesis adds (specs 000/001). Possessive quantifiers: a text of 200,000 "*" or
# spaces must not make these backtrack.
_LABEL = r"(?:sources?|references?)[ \t*_]*+(?:\([ \t]*+\d++[ \t]*+\)|\d++)?[ \t*_]*+"
# "Sources:", "**Sources**:", "## References", "Sources (3):", "> - Sources: ...": the whole line.
_CITATIONS_HEADING = re.compile(rf"^[ \t#>*_+\-]*+{_LABEL}(?::|\s*$)", re.IGNORECASE)
# "... depends on Postgres. Sources: thoughts:3f2a kge:12": the rest of the line.
_CITATIONS_TAIL = re.compile(rf"(?<=[.!?)\]])[ \t]++{_LABEL}:.*$", re.IGNORECASE)
# An item of the list under a citations heading, or an indented line continuing one.
_LIST_ITEM = re.compile(r"^(?:[ \t]*+(?:[-*+•]|\d++[.)]|\[\d++\])[ \t]|[ \t]{2})")
_CITATION = r"\b(?:thoughts?|kge|kgo):[\w\-]++"
# "thoughts:<uuid>", "kge:12", and "[thoughts:3f2a]" or "(kge:1, kgo:2)" with their brackets,
# each with the spaces before it, so the words around it stay one space apart.
_CITATION_TOKENS = re.compile(
    rf"[ \t]*+(?:[\[(][ \t]*+{_CITATION}(?:[ \t]*+[,;][ \t]*+{_CITATION})*+[ \t]*+[\])]|{_CITATION})",
    re.IGNORECASE,
)
_SENTENCE_END = {".", "!", "?", ";", ":", "(", ")", '"', "“", "”"}
_SNAKE_REL = re.compile(r"^[a-z]+(?:_[a-z]+)*_(?:to|from|on|of|with|by|in|into|for)$")
_SNAKE_VERB = re.compile(r"^(?:uses|calls|owns|manages|feeds|triggers|contains|includes)_[a-z_]+$")
LY_NOUNS = {"nightly", "daily", "weekly", "monthly", "hourly", "yearly", "quarterly", "family"}
RELATIVE = {"which", "that", "who"}
AUX_WORDS = {"is", "are", "was", "were", "be", "been", "being"}
ADVERBS_AUX = {
    "also", "still", "now", "currently", "only", "always", "never", "not", "no", "should",
    "will", "would", "can", "could", "may", "might", "must", "does", "did", "do", "already",
    "usually", "often", "sometimes", "mostly", "actually", "really", "just", "then", "later",
    "soon", "finally", "recently", "eventually", "probably", "definitely", "apparently",
    "even", "longer", "heavily", "directly", "has", "have", "had", "itself", "themselves",
}  # fmt: skip
_MAX_NAME_TOKENS = 5
_GAP_STOPS = {
    "and", "or", "but", "to", "from", "in", "on", "with", "by", "of", "for", "into", "at",
    "is", "are", "was", "were", "not", "no", "which", "that", "who", "it", "they", "we", "i",
    "goes", "went", "gets", "got", "comes", "came",
}  # fmt: skip
_QUANTITY_NOUNS = {"pair", "couple", "handful", "bunch", "set", "fleet", "cluster", "pool", "dozen"}
_GAP = 2  # words allowed between a verb and its preposition ("reads logs from")


@dataclass
class Tok:
    text: str
    start: int
    end: int
    first: bool  # first word of its sentence
    # Read many times per token by the rules, so lower-cased once.
    low: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.low = self.text.lower()


def strip_sources(text: str) -> str:
    """The text without its citations, which are not knowledge: a "Sources:" or "References:"
    line or heading with the list under it, a trailing "Sources: ..." after a sentence, and
    ``thoughts:``/``kge:``/``kgo:`` ids anywhere (read as names, they would stage a private
    thought's id as an entity)."""
    kept: list[str] = []
    in_list = False
    for line in text.split("\n"):
        if _CITATIONS_HEADING.match(line):
            in_list = True
            kept.append("")
            continue
        if in_list and (not line.strip() or _LIST_ITEM.match(line)):
            kept.append("")
            continue
        in_list = False
        kept.append(_CITATIONS_TAIL.sub("", line))
    return _CITATION_TOKENS.sub("", "\n".join(kept))


def tokenize(text: str) -> list[list[Tok]]:
    """Sentences of tokens; a line break also ends a sentence."""
    sentences: list[list[Tok]] = []
    for line_match in _LINE.finditer(text):
        line, offset = line_match.group(), line_match.start()
        current: list[Tok] = []
        outer: list[list[Tok]] = []  # the sentences a parenthesis interrupted
        for m in _TOKEN.finditer(line):
            word = m.group()
            if word == "(":
                # "Sidekiq (background jobs) and Postgres": the aside is a sentence of its own
                # and the sentence around it goes on after it.
                outer.append(current)
                current = []
                continue
            if word == ")" and outer:
                if current:
                    sentences.append(current)
                current = outer.pop()
                continue
            if word in _SENTENCE_END:
                if current:
                    sentences.append(current)
                current = []
                continue
            # A sentence-final period sticks to the last word ("Fly.io." -> "Fly.io").
            end = m.end()
            while word.endswith(".") and len(word) > 1:
                word, end = word[:-1], end - 1
            current.append(Tok(word, offset + m.start(), offset + end, not current))
        for part in (*outer, current):
            if part:
                sentences.append(part)
    return sentences


_LIST_MARK = re.compile(r"[ \t]*(?:#{1,6}|[-*+•]|\d+[.)])[ \t]+")
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])[\s]+(?=[A-Z0-9\"`(@*_\[])|(?<=[.!?][\"”)])\s+")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence: a line, a bullet or heading without its marker, or a
    sentence inside a paragraph ("e.g." and "v2.0" do not end one)."""
    spans: list[tuple[int, int]] = []
    for line in _LINE.finditer(text):
        start, end = line.start(), line.end()
        mark = _LIST_MARK.match(text, start, end)
        if mark:
            start = mark.end()
        cut = start
        for brk in _SENTENCE_BREAK.finditer(text, start, end):
            before = text[max(cut, brk.start() - 5) : brk.start()].lower()
            if before.endswith(("e.g.", "i.e.", "etc.", "vs.", " cf.")):
                continue
            spans.append((cut, brk.start()))
            cut = brk.end()
        if text[cut:end].strip():
            spans.append((cut, end))
    return [(a, b) for a, b in spans if text[a:b].strip()]


_NUMBER = re.compile(r"v?\d+(?:\.(?:\d+|x))*\+?|\d[\d,.]*[a-zA-Z%]{0,3}", re.IGNORECASE)
_DOTTED = re.compile(r"\w\.\w")
_INNER_CAPITAL = re.compile(r"[a-z][A-Z]|[A-Z]{2,}")


@lru_cache(maxsize=8192)
def is_technical(word: str) -> bool:
    """Spelt like a name whatever its position: CamelCase, digits, underscores, dots. A version,
    time, size or count alone ("3.11", "v2", "6pm", "10k") is not."""
    if _NUMBER.fullmatch(word):
        return False
    if any(c.isdigit() for c in word) and any(c.isalpha() for c in word):
        return True
    if "_" in word.strip("_") or _DOTTED.search(word):
        return True
    return bool(_INNER_CAPITAL.search(word)) and word.lower() not in NOT_NAMES


def name_word(tok: Tok) -> bool:
    low = tok.low
    if tok.text[:1].isupper() and not tok.first and low in KNOWN_TYPES:
        return True  # "written in Go"
    if low in FUNCTION_WORDS or low in PRONOUNS or low in ARROWS:
        return False
    if not any(c.isalnum() for c in tok.text):
        return tok.text == "&"
    if low.endswith("ly") and tok.text.islower() and len(low) > 4 and low not in LY_NOUNS:
        return False  # adverbs
    return not low.endswith(("n't", "’t"))  # noqa: RUF001


def determiner(tok: Tok) -> bool:
    return tok.low in DETERMINERS and (tok.text.islower() or tok.first)


class Sentence:
    def __init__(self, toks: list[Tok], text: str) -> None:
        self.toks = toks
        self.text = text
        # The rules ask about the same token's verb many times (each phrase's end, each clause).
        self._verbs: dict[int, tuple[VerbPattern, int, int | None] | None] = {}

    def span(self, i: int, j: int) -> str:
        return self.text[self.toks[i].start : self.toks[j - 1].end]

    def verb_at(self, i: int) -> tuple[VerbPattern, int, int | None] | None:
        """The relation verb starting at ``i``: (pattern, index after it, particle index)."""
        if i not in self._verbs:
            self._verbs[i] = self._verb_at(i)
        return self._verbs[i]

    def _verb_at(self, i: int) -> tuple[VerbPattern, int, int | None] | None:
        toks = self.toks
        low = toks[i].low
        if low in ARROWS:
            return VerbPattern((low,), "depends_on"), i + 1, None
        if _SNAKE_REL.match(toks[i].text) or _SNAKE_VERB.match(toks[i].text):
            return VerbPattern((low,), low), i + 1, None
        # "Both talk to Supabase", "all three sit behind Envoy": a quantifier standing alone.
        alone = toks[i - 1].low in ("both", "all") if i > 0 else False
        if i > 0 and determiner(toks[i - 1]) and low not in AUX_WORDS and not alone:
            return None  # "the cache depends on", "a build": a noun after a determiner
        if i > 0 and not toks[i].first and toks[i].text.istitle() and toks[i - 1].text.istitle():
            return None  # "the Minimum Supported Rust Version": a word inside a Title Case name
        for pattern in VERBS_BY_FIRST.get(low, ()):
            n = len(pattern.words)
            if tuple(t.low for t in toks[i : i + n]) != pattern.words:
                continue
            end = i + n
            if pattern.two_objects and all(
                t.low != pattern.two_objects for t in toks[end + 1 : end + 2 + _MAX_NAME_TOKENS]
            ):
                continue  # "Postgres replaced MySQL": no "with", so the plain pattern applies
            if pattern.particle is None:
                return pattern, end, None
            for k in range(end, min(end + _GAP + 1, len(toks))):
                if toks[k].low == pattern.particle:
                    return pattern, end, k
                if k == end == i + 1 == 1 and toks[k].low == "it":
                    continue  # "Deployed it to Fly.io": a log's verb and its unnamed project
                if toks[k].low in _GAP_STOPS or not (
                    name_word(toks[k]) or determiner(toks[k]) or toks[k].text.isalpha()
                ):
                    break  # "stores notes in" reads on; "uses X and writes to" does not
                if k == end and _same_particle(toks, k, pattern.particle):
                    break  # "Background work runs on X": "runs" is the verb, "work" a noun
        return None

    def verb_within(self, i: int) -> bool:
        """Whether the verb-looking word at ``i`` acts as a verb here. A bare verb ("uses",
        "cache", "deploy") needs an object after it: "the staging deploy." ends with a noun, "the
        build cache for speed" is followed by a preposition and "the build cache depends on"
        by another verb, so "deploy" and "cache" are nouns there."""
        found = self.verb_at(i)
        if found is None or found[1] >= len(self.toks):
            return False
        pattern, after, particle = found
        if particle is not None or pattern.two_objects or len(pattern.words) > 1:
            return True
        if pattern.words[0] in ARROWS or "_" in pattern.words[0]:
            return True
        nxt = self.toks[after]
        if not (determiner(nxt) or nxt.low in PRONOUNS or name_word(nxt)):
            return False
        return nxt.low not in VERBS_BY_FIRST

    def phrase_before(self, i: int) -> tuple[int, int] | None:
        """The noun phrase ending just before ``i`` (a subject)."""
        j = i
        while j > 0 and name_word(self.toks[j - 1]) and i - j < _MAX_NAME_TOKENS:
            if self.verb_within(j - 1) or determiner(self.toks[j - 1]):
                break
            j -= 1
        return self._trim(j, i)

    def phrase_after(self, i: int) -> tuple[int, int] | None:
        """The noun phrase starting at ``i`` after any determiners (an object). A quantity noun
        before "of" is passed over: "a pair of RP2040 boards" names the RP2040."""
        while i < len(self.toks) and determiner(self.toks[i]):
            i += 1
        toks = self.toks
        if i + 1 < len(toks) and toks[i].low in _QUANTITY_NOUNS and toks[i + 1].low == "of":
            i += 2
            while i < len(toks) and determiner(toks[i]):
                i += 1
        j = i
        while j < len(self.toks) and name_word(self.toks[j]) and j - i < _MAX_NAME_TOKENS:
            if self.verb_within(j) or determiner(self.toks[j]):
                break
            if j > i and _participle(self.toks[j]):
                break  # "RP2040 boards connected over TRRS": the participle starts a clause
            j += 1
        return self._trim(i, j)

    def _trim(self, i: int, j: int) -> tuple[int, int] | None:
        while i < j and (self.toks[i].text == "&" or determiner(self.toks[i])):
            i += 1
        while j > i and self.toks[j - 1].text == "&":
            j -= 1
        return (i, j) if i < j else None


_IRREGULAR_PAST = {
    "taught", "built", "made", "kept", "sent", "held", "brought", "thought", "left", "found",
    "told", "gave", "took", "became", "began", "broke", "wrote", "ran", "grew", "knew",
}  # fmt: skip


def _participle(tok: Tok) -> bool:
    """A past form after a noun ("boards connected over", "box taught me") ends the phrase."""
    low = tok.low
    if not tok.text.islower() or low in KNOWN_TYPES:
        return False
    return (low.endswith("ed") and len(low) > 4) or low in _IRREGULAR_PAST


def _same_particle(toks: list[Tok], k: int, particle: str) -> bool:
    """A verb at ``k`` that takes the same preposition, which follows it."""
    if k + 1 >= len(toks) or toks[k + 1].low != particle or not toks[k].text.islower():
        return False
    return any(p.particle == particle for p in VERBS_BY_FIRST.get(toks[k].low, ()))


def pronoun_at(sent: Sentence, i: int) -> str | None:
    if i < len(sent.toks) and sent.toks[i].low in ("it", "them"):
        return sent.toks[i].low
    return None


def between_subject_and_verb(tok: Tok) -> bool:
    low = tok.low
    if low in ADVERBS_AUX or low.endswith(("n't", "n’t")):  # noqa: RUF001
        return True
    return tok.text.islower() and low.endswith("ly") and len(low) > 4 and low not in LY_NOUNS
