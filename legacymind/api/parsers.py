"""The API's request parsers (REST_FRAMEWORK's DEFAULT_PARSER_CLASSES)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import IO, Any

from rest_framework import parsers
from rest_framework.exceptions import ParseError

# Arrays and objects inside one another. Python's decoder gives up near 1,000 levels, and a body
# that parses at ~900 still failed later, when json.dumps wrote it to a jsonb column (a 500).
# Ruby's JSON refuses more than 100 by default; no body of this API comes near it.
MAX_JSON_DEPTH = 100
TOO_DEEP = f"JSON parse error - nested more than {MAX_JSON_DEPTH} levels deep."


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser, but a body nested too deeply is a 400 like other bad JSON.

    DRF catches only ValueError: ``[[[[…`` a few thousand deep raised RecursionError out of
    the decoder, a 500 on every endpoint that reads a body.
    """

    def parse(
        self,
        stream: IO[Any],
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> Any:
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError(TOO_DEEP) from None
        if _deeper_than(data, MAX_JSON_DEPTH):
            raise ParseError(TOO_DEEP)
        return data


def _deeper_than(value: Any, limit: int) -> bool:
    # Iterative: a recursive walk would hit the recursion limit it is there to prevent.
    pending = [(value, 1)] if isinstance(value, dict | list) else []
    while pending:
        item, depth = pending.pop()
        children = item.values() if isinstance(item, dict) else item
        if depth > limit:
            return True
        pending.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False
