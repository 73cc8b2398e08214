"""Comparing two rendered pages."""

from __future__ import annotations

import re

# Django masks the CSRF token anew for every response (BREACH), so two renderings of the same
# page differ there and nowhere else.
_CSRF = re.compile(rb'(name="csrfmiddlewaretoken" value=")[^"]*(")')


def unmasked(content: bytes) -> bytes:
    """A page's bytes with its per-response CSRF token blanked: what a comparison of two
    responses must ignore to compare what they say."""
    return _CSRF.sub(rb"\1\2", content)
