"""Leave-names-out scoring: a labelled set scored with every name of its own gold taken out of
the built-in name lists, so that each gold name is one the extractor was never told about, as on
fresh prose (the bench's proxy for a held-out set, and a test's floor)."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any

from kg.extraction import entity_types, gazetteer, names, phrases

_VERSION_TAIL = re.compile(r"\s+v?\d+(?:\.\d+)*\+?$")


@contextlib.contextmanager
def names_withheld(items: list[dict[str, Any]]) -> Iterator[None]:
    """The built-in name lists without any name the gold of ``items`` holds (whole names, their
    first words when given names, and the names less a trailing version), so that every gold
    name is one the extractor has never been told about, as on fresh prose. The lists are
    restored afterwards, and the caches that read them are cleared both ways."""
    gold = {e["name"].lower() for item in items for e in item["entities"]}
    gold |= {_VERSION_TAIL.sub("", g) for g in gold}
    saved = (dict(gazetteer.KNOWN_TYPES), dict(gazetteer.CAPITALISED_TYPES))
    given = entity_types._given_names
    kept = given() - {g.split()[0] for g in gold if g.split()}

    def clear() -> None:
        for cached in (names.refused, names.clean, phrases.is_technical):
            cached.cache_clear()

    for table in (gazetteer.KNOWN_TYPES, gazetteer.CAPITALISED_TYPES):
        for key in gold & table.keys():
            del table[key]
    entity_types._given_names = lambda: kept  # type: ignore[assignment]
    clear()
    try:
        yield
    finally:
        gazetteer.KNOWN_TYPES.clear()
        gazetteer.KNOWN_TYPES.update(saved[0])
        gazetteer.CAPITALISED_TYPES.clear()
        gazetteer.CAPITALISED_TYPES.update(saved[1])
        entity_types._given_names = given
        clear()
