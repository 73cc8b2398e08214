"""Thought ids as clients write them: ``<uuid>`` or ``thoughts:<uuid>`` (the original system's
record id), hyphens optional. One parser for every endpoint that takes one (think's link fields
and ``thought_id``, the list and search filters), so that what one accepts the other does too,
and the pattern the OpenAPI schema documents is the one that decides."""

from __future__ import annotations

import re
import uuid

THOUGHT_REF_PATTERN = r"^(thoughts:)?[0-9a-fA-F]{8}(-?[0-9a-fA-F]{4}){3}-?[0-9a-fA-F]{12}$"
_REF = re.compile(THOUGHT_REF_PATTERN)


def parse_thought_ref(value: str) -> uuid.UUID:
    """The id in ``value`` (surrounding whitespace ignored); ValueError for anything else,
    including the other spellings ``uuid.UUID`` would take (braces, ``urn:uuid:``, hyphens in
    odd places), which no client of the original system sent."""
    text = value.strip()
    if not _REF.match(text):
        raise ValueError(f"{value!r} is not a thought id (<uuid> or thoughts:<uuid>)")
    return uuid.UUID(text.removeprefix("thoughts:"))
