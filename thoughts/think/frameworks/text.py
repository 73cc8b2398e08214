"""Small, deterministic text features the frameworks read: sentences, key terms, markers."""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Sequence

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"[a-z][a-z'-]*")

_STOPWORDS = """a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing down during each few
    for from further had has have having he her here hers him his how i if in into is it its
    itself just me more most my myself no nor not now of off on once only or other our ours
    out over own same she should so some such than that the their theirs them then there these
    they this those through to too under until up very was we were what when where which while
    who whom why will with would you your yours i'm it's don't can't won't isn't doesn't
    really thing things something maybe still even much many get got make made like want need
    think know trying try going way use used using one two well says said fails failed
    matters seems feel feels"""
STOPWORDS = frozenset(_STOPWORDS.split())


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if s and s.strip()]


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def key_terms(text: str, n: int = 3) -> list[str]:
    """The most frequent content words (ties by first appearance)."""
    found = [w.strip("'-") for w in words(text)]
    found = [w for w in found if len(w) >= 4 and w not in STOPWORDS]
    counts = Counter(found)
    first = {w: i for i, w in reversed(list(enumerate(found)))}
    return sorted(counts, key=lambda w: (-counts[w], first[w]))[:n]


def markers(text: str, phrases: Sequence[str]) -> list[str]:
    """Which of ``phrases`` occur as whole words or phrases."""
    lower = text.lower()
    return [p for p in phrases if re.search(rf"(?<![\w']){re.escape(p)}(?![\w'])", lower)]


def sentences_with(text: str, phrases: Sequence[str]) -> list[str]:
    return [s for s in sentences(text) if markers(s, phrases)]


def clip(text: str, limit: int = 140) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def pick(options: Sequence[str], text: str, salt: str) -> str:
    """A choice that depends only on the text, stable across processes."""
    digest = hashlib.blake2b(f"{salt}:{text}".encode(), digest_size=4).digest()
    return options[int.from_bytes(digest, "little") % len(options)]


def topic(text: str) -> str:
    terms = key_terms(text, 2)
    return " and ".join(terms) if terms else "this"
