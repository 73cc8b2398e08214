"""The MCP door's settings, read from the environment (documented in docs/mcp.md and
.env.example's terms): a bad value stops the process naming the variable."""

from __future__ import annotations

import os
from functools import cache
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured


def _names(variable: str) -> list[str]:
    return [item.strip() for item in os.environ.get(variable, "").split(",") if item.strip()]


@cache
def direct_write_users() -> frozenset[str]:
    """``MCP_DIRECT_WRITE_USERS``: usernames whose memory-server writes go straight into the
    KG, as a moderator's do, instead of waiting in the moderation queue."""
    return frozenset(_names("MCP_DIRECT_WRITE_USERS"))


@cache
def allowed_origins() -> frozenset[str]:
    """``MCP_ALLOWED_ORIGINS``: browser origins (scheme://host[:port]) allowed to call /mcp
    besides the server's own and ``DJANGO_CSRF_TRUSTED_ORIGINS``."""
    origins = _names("MCP_ALLOWED_ORIGINS")
    for origin in origins:
        parts = urlsplit(origin)
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.path:
            raise ImproperlyConfigured(
                f"MCP_ALLOWED_ORIGINS: {origin!r} is not an origin like https://example.com"
            )
    return frozenset(origin.lower() for origin in origins)
