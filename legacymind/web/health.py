"""``/healthz``: is the database reachable, and Redis when one is configured. No auth.

It also names any vector index that is out (a re-embed rebuilding it, or a killed one that left
it out): the app still works, but searches of that table scan it until ``reembed`` builds it.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET

from legacymind.vectors.indexes import indexes_out
from legacymind.vectors.reembed import embedded_models
from legacymind.vectors.search import indexed_dims, pgvector_version

logger = logging.getLogger("legacymind.web.health")


def _check_database() -> str:
    version = pgvector_version()
    return f"ok (pgvector {version})" if version else "ok (pgvector missing)"


def _check_vector_indexes() -> str:
    out = indexes_out(tables=embedded_models(), dims=indexed_dims())
    if not out:
        return "ok"
    return f"out: {', '.join(out)} (searches scan those tables; manage.py reembed builds them)"


def _check_cache() -> str:
    """The cache answers (the database cache's table exists; Redis is checked below)."""
    from django.core.cache import cache

    cache.get("legacymind:healthz")
    return "ok"


def _check_redis() -> str:
    import redis

    client = redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=2, socket_timeout=2)
    client.ping()
    return "ok"


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    checks: dict[str, str] = {}
    healthy = True
    redis = settings.REDIS_URL
    steps = (
        ("database", _check_database),
        ("redis" if redis else "cache", _check_redis if redis else _check_cache),
    )
    if not redis:
        checks["redis"] = "not configured"
    for name, check in steps:
        try:
            checks[name] = check()
        except Exception as exc:  # any failure of a dependency is "unhealthy", with its reason
            healthy = False
            checks[name] = f"error: {type(exc).__name__}"
    if healthy:  # informational: a table without its index is slower, not down
        checks["vector_indexes"] = _check_vector_indexes()
    response = JsonResponse(
        {"status": "ok" if healthy else "unavailable", "checks": checks},
        status=200 if healthy else 503,
    )
    if not healthy:
        # One WARNING line saying what failed, instead of Django's ERROR "Service Unavailable"
        # without a reason, every few seconds while a health check polls an outage.
        failed = ", ".join(f"{k} {v}" for k, v in checks.items() if v.startswith("error"))
        logger.warning("healthz unavailable: %s", failed)
        response._has_been_logged = True  # type: ignore[attr-defined]
    return response
