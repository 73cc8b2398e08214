"""The admin's search, minus the words of private thoughts.

Django's admin search matches each word of the term in any of ``search_fields``. Where one of
those fields holds a thought's words, a private thought must not match on them: the word has to
be found in a field that is not its words (metadata), or the thought must not be private. Used
by the Thought admin and the inner voice's exchange admin, and by the KG observation admin for
the name of an entity drawn from someone's private thought.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from django.db.models import Model, Q, QuerySet
from django.utils.text import smart_split, unescape_string_literal

M = TypeVar("M", bound=Model)

# What the admin shows in place of words that belong to someone's private thought.
PRIVATE = "(private: visible only to its owner)"


def search_words(search_term: str) -> list[str]:
    """The admin's own split of a search (quoted phrases stay whole)."""
    words = []
    for bit in smart_split(search_term):
        if bit.startswith(('"', "'")) and bit[0] == bit[-1]:
            bit = unescape_string_literal(bit)
        if bit:
            words.append(bit)
    return words


def without_private_words(
    results: QuerySet[M], search_term: str, *, words_public: Q, metadata: Sequence[str]
) -> QuerySet[M]:
    """``results`` of the admin's search, keeping a row for each word only when the row's words
    may be searched (``words_public``) or the word is in one of the ``metadata`` fields."""
    for word in search_words(search_term):
        found_in_metadata: Any = Q()
        for field in metadata:
            found_in_metadata |= Q(**{f"{field}__icontains": word})
        results = results.filter(words_public | found_in_metadata)
    return results
