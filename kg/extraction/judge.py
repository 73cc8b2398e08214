"""Judgements on a phrase: is it a name by its spelling, a bare common noun, a possessive, a code
identifier, a part of the passage's project, a fit end of a replacement."""

from __future__ import annotations

import re

from kg.extraction.around import between
from kg.extraction.entity_types import context_type as _context_type
from kg.extraction.entity_types import software_type
from kg.extraction.lexicon import (
    HEAD_TYPES,
)
from kg.extraction.names import KIND_NOUNS, clean, known_lower, known_type, name_like
from kg.extraction.nouns import common_noun, english_word, plain_word
from kg.extraction.phrases import (
    Sentence,
)
from kg.extraction.state import (
    VERSION_TOKEN,
)


def apposed_name(surface: str) -> bool:
    """Set off by commas, a capitalised name ("Maria") or one lower-case word that is no English
    noun ("A Python CLI, drillbit, wraps ...")."""
    if surface[:1].isupper():
        return True
    return " " not in surface and clean(surface) is not None and not english_word(surface)


def possessive(surface: str) -> tuple[str | None, str]:
    """ "Quillstack's search service" -> ("Quillstack", "search service"); "Vector's" -> Vector."""
    text = surface.replace("\u2019", "'")
    if "'s " in text:
        owner, _, thing = text.partition("'s ")
        return owner, thing
    return None, text.removesuffix("'s")


def bare(surface: str) -> bool:
    """A bare common noun: "frontend", "payments", "lab" (not "nginx", "web-api", "S3")."""
    return surface.islower() and (
        surface in HEAD_TYPES or (surface.isalpha() and known_type(surface) is None)
    )


def common_phrase(surface: str) -> bool:
    """ "Probe results", "search results", "Transformations": a phrase of English words only,
    with no head that names a part ("worker", "job", "dashboard"), so it says what the passage's
    project does, not which thing does it. A capital only at the sentence's start is no name."""
    words = surface.split()
    if not words or len(words) > 3:
        return False
    words = [words[0][:1].lower() + words[0][1:], *words[1:]]
    head = words[-1]
    if head in HEAD_TYPES or head in KIND_NOUNS or head.endswith(("er", "or")):
        return False
    return all(w.isalpha() and w.islower() and known_type(w) is None and _english(w) for w in words)


def _english(word: str) -> bool:
    """In the lexicon as written or as the singular of a plural ("transformations")."""
    forms = [
        word,
        word[:-1] if word.endswith("s") else "",
        word[:-2] if word.endswith("es") else "",
    ]
    return any(f and (english_word(f) or plain_word(f)) for f in forms)


# "$PGHOST", "${api_key}": a shell variable.
_SHELL_VARIABLE = re.compile(r"\$\{?\Z")
_BOUNDARY = re.compile(r"\b")


def identifier(name: str, text: str) -> bool:
    """A snake_case word that is no table, or a name written as a shell variable."""
    if between(name, text, _SHELL_VARIABLE, _BOUNDARY):
        return True
    if " " in name or "_" not in name or "." in name or known_type(name) is not None:
        return False
    return _context_type(name, text) is None


def strong(name: str) -> bool:
    """A name outside any relation must look like one by its spelling."""
    return any(name_like(w) for w in name.split())


def capitalised_noun(sent: Sentence, span: tuple[int, int]) -> bool:
    """ "Physics now runs on Rapier": an English noun capitalised only because it starts the
    sentence names a part or concern of the passage's project, not a product."""
    tok = sent.toks[span[0]]
    if sent.toks[span[1] - 1].low in ("extra", "extras"):
        return True  # "the optional `otel` extra pulls in ...": a packaging option of the project
    return span[1] - span[0] == 1 and tok.first and tok.text.istitle() and common_noun(tok.low)


def owned_part(sent: Sentence, span: tuple[int, int]) -> bool:
    """ "Its core solver", "our search": a part named only by a possessive and common words, so
    it stands for the project the passage is about."""
    toks = sent.toks
    return (
        span[0] > 0
        and toks[span[0] - 1].low in ("its", "our", "my", "their")
        and not strong(sent.span(*span))
    )


def known_tech(words: list[str]) -> str | None:
    """A known language or framework before the kind noun, with the version written after it:
    "a Fortran 2008 module" gives "Fortran 2008"."""
    for n, word in enumerate(words[:-1]):
        if software_type(word, initial=n == 0) in ("library", "technology"):
            end = n + 1
            while end < len(words) - 1 and VERSION_TOKEN.fullmatch(words[end]):
                end += 1
            return " ".join(words[n:end])
    return None


def title_noun(name: str) -> bool:
    """One English noun written in Title Case ("Save", "Performance", "Finance"): outside any
    relation there is nothing to say it names a product rather than a UI label or a heading."""
    return " " not in name and name.istitle() and common_noun(name.lower())


def replaceable(name: str) -> bool:
    """An end of a replacement: a name by its spelling (capitals, digits, dots, a known word)
    or one lower-case word that is no English noun. Not a description in common words ("our
    home-grown solver", "the bulk endpoint"), which would give the moderator no node to keep."""
    words = (clean(name) or "").split()
    if not words:
        return False
    if len(words) == 1:
        return migratable(words[0])
    return any(
        any(c.isupper() or c.isdigit() for c in w) or known_lower(w) or re.search(r"[._]", w)
        for w in words
    )


def migratable(name: str) -> bool:
    """An end of "from X to Y": a name by its spelling, or one lower-case word that is no English
    noun ("from dnsmasq to unbound" in a log written in lower case; not "from staging to prod")."""
    if strong(name):
        return True
    word = clean(name)
    return word is not None and " " not in word and word.isalpha() and not common_noun(word)
