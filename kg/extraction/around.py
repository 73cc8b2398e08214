"""Whether a name stands in a given context in a text ("by Ana", "the `renders` queue"), found
without compiling a pattern per name.

A rule such as ``CUE\\s+NAME\\b`` written as one pattern with the name spliced in costs a compile
of the whole cue list for every name of every passage (milliseconds each, and enough distinct
patterns to overflow ``re``'s own cache). Here the name is a literal, so a match is an occurrence
of it with the context before it ending exactly there and the context after it starting exactly
there: the contexts are compiled once, and ``NAME`` is found with ``str.find``. A context before
the name is a pattern ending in ``\\Z``, searched with the occurrence as its end; a context after
it is matched at the occurrence's end on the whole text, so lookbehinds and ``\\b`` see the
name's own characters, as in the spliced pattern.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

_WORD_EDGE = re.compile(r"\b")


def starts(name: str, text: str) -> Iterator[int]:
    """Every index where ``name`` is written in ``text`` as is, overlapping ones included."""
    at = text.find(name)
    while at != -1:
        yield at
        at = text.find(name, at + 1)


@lru_cache(maxsize=2048)
def _starts_pattern(name: str) -> re.Pattern[str]:
    return re.compile(f"(?={re.escape(name)})", re.IGNORECASE)


def starts_ignoring_case(name: str, text: str) -> Iterator[int]:
    """Every index where ``name`` is written in any case, as ``re.IGNORECASE`` matches it (ASCII
    case folding is exact for ASCII text; other text goes through ``re`` itself)."""
    if name.isascii() and text.isascii():
        yield from starts(name.lower(), text.lower())
    else:
        yield from (m.start() for m in _starts_pattern(name).finditer(text))


def word_edge(text: str, at: int) -> bool:
    """``\\b`` at ``at``."""
    return _WORD_EDGE.match(text, at) is not None


def ends_at(before: re.Pattern[str], text: str, at: int) -> bool:
    """``before`` (a pattern ending in ``\\Z``) matches a stretch of ``text`` ending at ``at``."""
    return before.search(text, 0, at) is not None


def begins_at(after: re.Pattern[str], text: str, at: int) -> bool:
    """``after`` matches at ``at``, with the whole text around it."""
    return after.match(text, at) is not None


def between(
    name: str,
    text: str,
    before: re.Pattern[str] | None,
    after: re.Pattern[str] | None,
    *,
    edge_before: bool = False,
    ignore_case: bool = False,
) -> bool:
    """``before`` ``name`` ``after`` is written somewhere in ``text``: the spliced pattern's
    search, with ``edge_before`` for a ``\\b`` right before the name."""
    found = starts_ignoring_case(name, text) if ignore_case else starts(name, text)
    end = len(name)
    return any(
        (not edge_before or word_edge(text, at))
        and (before is None or ends_at(before, text, at))
        and (after is None or begins_at(after, text, at + end))
        for at in found
    )
