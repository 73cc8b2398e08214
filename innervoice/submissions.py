"""An ask posted twice from the same form runs once.

A double click on Ask, or a browser resending the form, would otherwise cost the model calls
twice and store two answers. Each rendering of the ask form carries a fresh token; the first
post with a token claims it in the cache (``cache.add`` is atomic in Redis and in the database
cache), runs the ask and leaves the answer's address under the token. A second post with the
same token waits for that address and redirects to it: the browser, which shows only the last
response, lands on the answer the first post produced. An ask that fails gives its token back,
so the same form can be sent again.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from django.core.cache import cache

from legacymind.web.form_tokens import is_token

FIELD = "ask_token"
CLAIM_TTL = 15 * 60  # seconds a token is remembered: longer than any ask takes
WAIT_SECONDS = 30.0  # how long a second post waits for the first one's answer
POLL_SECONDS = 0.2
_PENDING = "pending"


class StillRunning(Exception):
    """The first post with this token has not finished within the wait."""


@dataclass(frozen=True)
class Claim:
    """The right to run an ask for a token (``key`` None: the post carried no usable token and
    runs unguarded, as an older page would)."""

    key: str | None

    def done(self, url: str) -> None:
        if self.key:
            cache.set(self.key, url, CLAIM_TTL)

    def release(self) -> None:
        if self.key:
            cache.delete(self.key)


def claim(*, user_id: object, token: str, wait: float | None = None) -> Claim | str:
    """A ``Claim`` when this post is to run the ask, or the address of the answer an earlier
    post with the same token produced (after waiting up to ``wait`` seconds, WAIT_SECONDS by
    default, for it; then ``StillRunning``). Cache errors (Redis down) propagate."""
    if not is_token(token):
        return Claim(None)
    key = f"innervoice:page-ask:{user_id}:{token}"
    deadline = time.monotonic() + (WAIT_SECONDS if wait is None else wait)
    while True:
        if cache.add(key, _PENDING, CLAIM_TTL):
            return Claim(key)
        earlier = cache.get(key)
        if earlier is not None and earlier != _PENDING:
            return str(earlier)
        # Pending, or just given back by a failed first post (the next add then claims it).
        if time.monotonic() >= deadline:
            raise StillRunning
        time.sleep(POLL_SECONDS)
