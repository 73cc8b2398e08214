"""Display-only filters for the browser pages: stored identifiers read as words. The API and
the stored rows keep their own spelling; only what a page shows changes."""

from __future__ import annotations

from django import template

register = template.Library()


@register.filter
def words(identifier: object) -> str:
    """A relation, kind or origin as words: ``writes_to`` reads "writes to" ("depends-on"
    too), ``inner_voice.feedback`` "inner voice feedback"."""
    text = str(identifier or "")
    for mark in "_-.":
        text = text.replace(mark, " ")
    return " ".join(text.split())
