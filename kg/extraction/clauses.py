"""Clause shapes the verb scanner of ``heuristic`` leaves to these helpers: the agent of a passive
written after its object ("shipped to Loki by Vector"), the subject a "which" refers to when no
relation came before it, the topic of a work log ("day 3 on the kiln monitor"), and a list after
a colon ("talks to three services: billing, search and mail")."""

from __future__ import annotations

import re

from kg.extraction.lexicon import DETERMINERS, FUNCTION_WORDS, PRONOUNS
from kg.extraction.names import clean, known_type, name_like
from kg.extraction.nouns import common_noun, english_word, plain_word
from kg.extraction.phrases import (
    AUX_WORDS,
    Sentence,
    Tok,
    between_subject_and_verb,
    determiner,
    name_word,
)

_LOG_OPENING = re.compile(
    r"\A[ \t#*_>-]*(?:[\w .,/-]{0,30}?\b(?:day|week|session|sprint|night|evening)\s*#?\d*"
    r"|devlog\s*#?\d*|notes?|log)\s+(?:on|for)\s+(?P<topic>[^\n.:;!?]+?)\s*[.:!\n]",
    re.IGNORECASE,
)


def passive_agent(sent: Sentence, k: int, end: int) -> tuple[int, int] | None:
    """ "Logs are shipped to Loki by Vector": with an auxiliary before the verb and "by" right
    after its objects, the phrase after "by" is who does it, so it is the relation's source."""
    toks = sent.toks
    j = k
    while j > 0 and between_subject_and_verb(toks[j - 1]) and toks[j - 1].low not in AUX_WORDS:
        j -= 1
    if j == 0 or toks[j - 1].low not in AUX_WORDS or end >= len(toks) or toks[end].low != "by":
        return None
    return sent.phrase_after(end + 1)


def passive_source(sent: Sentence, k: int) -> tuple[int, int] | None:
    """ "Logs from the checkout service are shipped ...": the place the passive's subject comes
    from, which its agent therefore reads from."""
    toks = sent.toks
    aux = next((j for j in range(k - 1, -1, -1) if toks[j].low in AUX_WORDS), None)
    if aux is None:
        return None
    for j in range(aux - 1, 0, -1):
        if toks[j].low == "from":
            span = sent.phrase_after(j + 1)
            return span if span is not None and span[1] == aux else None
    return None


def relative_antecedent(sent: Sentence, k: int) -> tuple[int, int] | None:
    """ "driven by the catalog-sync job, which now writes to": the phrase just before ", which"
    is the subject when the scanner found no relation object for "which" to refer to."""
    toks = sent.toks
    j = k
    while j > 0 and between_subject_and_verb(toks[j - 1]):
        j -= 1
    if j < 2 or toks[j - 1].low not in ("which", "who"):
        return None
    j -= 1
    if toks[j - 1].text == ",":
        j -= 1
    span = sent.phrase_before(j)
    if span is None or span[1] != j:
        return None
    if span[0] > 0 and determiner(toks[span[0] - 1]) and toks[span[0] - 1].low in ("a", "an"):
        return None  # "a tool, which ...": no name to stand for
    return span


def log_topic(text: str) -> str | None:
    """What a work log is about, from its opening line: "day 12 on the weather station.", "jam
    day 2 on Snailmail Express.", "Notes for kestrel:". The name after "on" or "for" if it is a
    definite or named thing (not "on purpose", "for now")."""
    match = _LOG_OPENING.match(text)
    if match is None:
        return None
    words = match.group("topic").split()
    definite = bool(words) and words[0].lower() in ("the", "my", "our")
    words = words[1:] if definite else words
    coined = (
        len(words) == 1
        and words[0].isalpha()
        and not english_word(words[0].lower())
        and not plain_word(words[0].lower())
    )
    if not words or len(words) > 4 or not (definite or coined or any(name_like(w) for w in words)):
        return None  # "day 4 on ferrywatch" names a project; "day 4 on purpose" does not
    surface = " ".join(words)
    name = clean(surface)
    if name is None or name.lower() != surface.lower():
        return None
    return name


_LIST_WORDS = {",", "and", "or", "&"}


def join_colon_lists(sentences: list[list[Tok]], text: str) -> list[list[Tok]]:
    """ "It talks to three services: billing, search and mail.": the tokenizer ends a sentence
    at a colon; when the part before it holds a relation verb and the rest of the line is only
    a list of names, the list is put back as the verb's objects. A comma stands for the colon
    when an object phrase came before it ("three services, billing, ..."); after a verb or its
    preposition ("It depends on: Redis") the list follows directly."""
    out: list[list[Tok]] = []
    for toks in sentences:
        prev = out[-1] if out else None
        if prev and _ends_at_colon(prev, toks, text) and _only_names(toks, text):
            head = Sentence(prev, text)
            if any(head.verb_at(i) is not None for i in range(len(prev))):
                first = toks[0]
                moved = [Tok(first.text, first.start, first.end, False), *toks[1:]]
                if name_word(prev[-1]) and not head.verb_at(len(prev) - 1):
                    end = prev[-1].end
                    moved.insert(0, Tok(",", end, end + 1, False))
                out[-1] = [*prev, *moved]
                continue
        out.append(toks)
    return out


def _ends_at_colon(prev: list[Tok], toks: list[Tok], text: str) -> bool:
    between = text[prev[-1].end : toks[0].start]
    return "\n" not in between and between.strip(" \t`*_") == ":"


def _only_names(toks: list[Tok], text: str) -> bool:
    sent = Sentence(toks, text)
    if any(sent.verb_at(i) is not None for i in range(len(toks))):
        return False
    listed = any(t.text == "," for t in toks)  # "pricing, inventory and billing" is a list
    return all(
        t.low in _LIST_WORDS or determiner(t) or (name_word(t) and (listed or not _gerund(t)))
        for t in toks
    )


def _gerund(tok: Tok) -> bool:
    """ "retrying", "caching": a lower-case -ing word makes the rest of the line a clause."""
    return tok.text.islower() and tok.low.endswith("ing")


_GLOSSED = re.compile(
    r"\b(?P<name>[A-Z][\w.-]+(?: [A-Z][\w.-]+)?) \((?:my|our|a|an|the)\b[^()\n]{0,40}?"
    r"\b(?:app|project|tool|game|library|site|service|bot|plugin|crate|package)\)"
)


def glossed_topic(text: str) -> str | None:
    """ "Tallybird (my tiny invoicing app) pays for itself": a name glossed in parentheses as
    the writer's app or project is what the passage is about."""
    match = _GLOSSED.search(text)
    return match.group("name") if match else None


_NAME = r"[\w.+-]+(?: [\w.+-]+){0,2}?"
_RELEASE_OPENING = re.compile(
    rf"\A[ \t#*_]*(?:(?P<before>{_NAME}):?[ \t]+(?:release notes|changelog|change log)\b"
    rf"|(?:release notes|changelog|change log) for (?P<after>{_NAME})\b"
    # "Version 3.1 of Tidepool is out": a release announcement names its project.
    rf"|(?:version|release) v?\d[\w.]* of (?P<of>{_NAME})\b(?= is\b| has\b|,|:)"
    rf"|(?:shipped|released) v?\d[\w.]* of (?P<shipped>{_NAME})\b(?= to\b| on\b|[.,:]))",
    re.IGNORECASE,
)


_RELEASE_HEADING = re.compile(
    rf"\A[ \t]*#+[ \t]*(?P<name>{_NAME})(?: for (?P<platform>[\w .]+?))?,?[ \t]+(?:release[ \t]+|version[ \t]+|v)\d",
    re.IGNORECASE,
)
_MINIMUM = re.compile(
    r"\bminimum(?: [\w-]+){0,2} is(?: now)? (?P<after>(?!the\b)[A-Za-z][\w.+-]*(?: v?\d[\w.]*)?)"
    r"|(?P<before>[A-Z][\w.+-]*(?: v?\d[\w.]*)?) is(?: now)? the(?: new)? minimum\b"
)


def minimum_requirement(sentence: str) -> str | None:
    """ "The minimum deployment target is now iOS 16", "ClickHouse 24.3 is the new minimum": the
    version the project now requires."""
    match = _MINIMUM.search(sentence)
    found = (match.group("after") or match.group("before")) if match else None
    return found if found and name_like(found.split()[0]) else None


def release_topic(text: str) -> str | None:
    """ "Emberfall Engine: release notes for 0.9", "Changelog for marlin": the project whose
    release notes these are, so that "Physics now runs on Rapier" is about it."""
    heading = _RELEASE_HEADING.match(text)  # "## Wayfarer for iOS, release 3.4.0"
    match = _RELEASE_OPENING.match(text)
    if match is None and heading is None:
        return None
    found = heading.group("name") if heading else ""
    said = (
        match.group("before") or match.group("after") or match.group("of") or match.group("shipped")
        if match
        else ""
    )
    name = clean(found or said or "")
    return name if name is not None and any(name_like(w) for w in name.split()) else None


def paired_on(sent: Sentence) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """ "Paired with Teodora on the billing-export job": the person and what they work on."""
    toks = sent.toks
    for i in range(len(toks) - 3):
        if toks[i].low not in ("paired", "pairing", "pair") or toks[i + 1].low != "with":
            continue
        person = sent.phrase_after(i + 2)
        if person is None or person[1] >= len(toks) or toks[person[1]].low != "on":
            return None
        thing = sent.phrase_after(person[1] + 1)
        return (person, thing) if thing is not None else None
    return None


def headed_participle(sent: Sentence, k: int) -> tuple[int, int] | None:
    """ "New async client, built on aiohttp.": a bullet that opens with a thing and goes on with
    a participle after a comma says the participle of that thing, not of the project."""
    toks = sent.toks
    if (
        k < 2
        or toks[k - 1].text != ","
        or not re.fullmatch(r"[a-z]+(?:ed|en)|built|made|kept", toks[k].text)
    ):
        return None
    span = sent.phrase_before(k - 1)
    if span is None or span[1] != k - 1:
        return None
    if any(not determiner(t) for t in toks[: span[0]]):
        return None  # the phrase must open the sentence
    return span


_STARTED = re.compile(
    r"\b(?:I|we)(?:'ve| have)?\s+(?:started|built|wrote|created|launched|released|shipped)"
    r"\s+(?P<name>[A-Za-z][\w.-]*[\w])\b(?!\s+(?:a|an|the|my|our|it|on|in|to|for|with)\b)"
)


def first_person_topic(text: str) -> str | None:
    """ "Three years ago I started tinyfeed as a weekend project": the thing the writer says they
    started or built is what the passage is about, when it is spelt as a name (not "I started
    work", "we shipped it")."""
    for match in _STARTED.finditer(text):
        name = match.group("name")
        if name.lower() in FUNCTION_WORDS or name.lower() in PRONOUNS or determiner_word(name):
            continue  # "we wrote last year", "I built it"
        if clean(name) is not None and (name_like(name) or not common_noun(name.lower())):
            return name
    return None


def determiner_word(word: str) -> bool:
    return word.lower() in DETERMINERS


def release_platform(text: str) -> str | None:
    """ "## Wayfarer for iOS, release 3.4.0": the platform this project's release runs on."""
    heading = _RELEASE_HEADING.match(text)
    platform = heading.group("platform") if heading else None
    return platform if platform and known_type(platform) == "technology" else None


_REQUIREMENTS_HEADING = re.compile(
    r"\s*#{1,6}\s*(?:requirements|dependencies|prerequisites|requires)\b", re.IGNORECASE
)
_STACK_HEADING = re.compile(
    r"\s*#{1,6}\s*(?:(?:tech(?:nology)?\s+)?stack|built\s+with|powered\s+by|tooling)\s*$",
    re.IGNORECASE,
)
_BULLET = re.compile(r"[ \t]*[-*+]\s+")


def required_items(text: str) -> dict[int, str]:
    """Where each list item under a "Requirements", "Dependencies" or "Prerequisites" heading
    starts (its first word), with the relation its name has to the project: ``depends_on``, or
    ``uses`` under a "Stack" or "Built with" heading."""
    found: dict[int, str] = {}
    under: str | None = None
    for line in re.finditer(r"[^\n]+", text):
        if re.match(r"\s*#{1,6}\s", line.group()):
            under = (
                "depends_on"
                if _REQUIREMENTS_HEADING.match(line.group())
                else "uses"
                if _STACK_HEADING.match(line.group())
                else None
            )
        elif under and (item := _BULLET.match(line.group())):
            found[line.start() + item.end()] = under
    return found
