"""The token a rendered form carries so that the server can tell the same form sent twice (a
double click, a resend) from a new one: the inner voice's ask form and the journal's question
form."""

from __future__ import annotations

import re
import uuid

_TOKEN = re.compile(r"[0-9a-f]{32}")


def new_token() -> str:
    return uuid.uuid4().hex


def is_token(value: str) -> bool:
    """Whether ``value`` is a token ``new_token`` could have made (anything else: no token)."""
    return bool(_TOKEN.fullmatch(value))
