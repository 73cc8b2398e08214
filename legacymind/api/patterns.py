"""What the schema says of strings and JSON values that the server refuses by their content.

Plain constants (the settings read ``JSON_VALUE_SCHEMA``): Postgres' text and jsonb cannot hold
U+0000, so every text input refuses it (DRF's CharField, ``legacymind.validators.no_nul``), and
the schema says so with a pattern instead of leaving a client to find out.
"""

from __future__ import annotations

from typing import Any

NO_NUL = r"^[^\u0000]*$"
# White space as Python's str.strip() sees it. \s alone says the same to Python's re, but a
# generator of examples (hypothesis) reads \s as the Unicode space categories only, without
# the information separators U+001C-U+001F, U+0085 and the line and paragraph separators.
_SPACES = r"\s\u001c-\u001f\u0085\u2028\u2029"
WS = rf"[{_SPACES}]"
EDGE = rf"[^{_SPACES}\u0000]"  # a character that is neither white space nor NUL
ANY = r"[^\u0000]"
# Not blank (some character that is not white space) and no NUL.
NOT_BLANK = rf"^{ANY}*{EDGE}{ANY}*$"
# Some character that is not white space (a search, for texts that may hold a NUL).
HAS_TEXT = rf"[^{_SPACES}]"
_REF = {"$ref": "#/components/schemas/JSONValue"}
NO_NUL_KEY = {"pattern": NO_NUL}

JSON_OBJECT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "propertyNames": NO_NUL_KEY,
    "additionalProperties": _REF,
}
JSON_VALUE_SCHEMA: dict[str, Any] = {
    "description": "Any JSON value without a NUL character (U+0000) in a string or key.",
    "anyOf": [
        {"type": "string", "pattern": NO_NUL},
        {"type": ["number", "boolean", "null"]},
        {"type": "array", "items": _REF},
        JSON_OBJECT_SCHEMA,
    ],
}


def numeric_text_or_number(description: str, *, empty: bool = True) -> dict[str, Any]:
    """A JSON number, or a string that reads as a finite one (or, with ``empty``, "" for
    none)."""
    return {
        "anyOf": [
            {"type": "number"},
            {"type": "string", "pattern": NUMERIC_TEXT if empty else NUMERIC_TEXT_NOT_EMPTY},
        ],
        "description": description,
    }


# What float() reads as a finite number, within bounds that never overflow to infinity.
NUMERIC_TEXT_NOT_EMPTY = r"^\s*[+-]?(\d{1,30}(\.\d{0,30})?|\.\d{1,30})([eE][+-]?\d{1,2})?\s*$"
NUMERIC_TEXT = "^$|" + NUMERIC_TEXT_NOT_EMPTY
# What DRF's IntegerField reads from text: int() after dropping a ".0..." at the end.
INTEGER_TEXT = r"^\s*[+-]?\d{1,18}(\.0*)?\s*$"


def any_case(word: str) -> str:
    """A pattern for ``word`` in any case, with - or _ for its underscores (ECMA and Python
    regular expressions have no portable case-insensitive flag)."""
    return "".join(
        "[-_]" if c == "_" else f"[{c.lower()}{c.upper()}]" if c.isalpha() else c for c in word
    )
