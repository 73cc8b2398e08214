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


# The providers' ids (``offline-composer``, ``cli``, ``grok``) as a reader would name them.
PROVIDERS = {
    "offline-composer": "the offline composer (no chat model)",
    "cli": "a chat model, through its command line",
    "grok": "Grok",
}


@register.filter
def provider(identifier: object) -> str:
    """Who wrote a text, for a page's muted meta line: never the bare provider id."""
    key = str(identifier or "")
    return PROVIDERS.get(key, words(key))
