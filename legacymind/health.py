"""``/healthz``: is the database reachable, and Redis when one is configured. No auth.

It also names any vector index that is out (a re-embed rebuilding it, or a killed one that left
it out): the app still works, but searches of that table scan it until ``reembed`` builds it.
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET

from legacymind.reembed import embedded_models
from legacymind.vector_indexes import indexes_out
from legacymind.vectors import indexed_dims, pgvector_version


def _check_database() -> str:
    version = pgvector_version()
    return f"ok (pgvector {version})" if version else "ok (pgvector missing)"


def _check_vector_indexes() -> str:
    out = indexes_out(tables=embedded_models(), dims=indexed_dims())
    if not out:
        return "ok"
    return f"out: {', '.join(out)} (searches scan those tables; manage.py reembed builds them)"


def _check_redis() -> str:
    import redis

    client = redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=2, socket_timeout=2)
    client.ping()
    return "ok"


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    checks: dict[str, str] = {}
    healthy = True
    for name, check in (("database", _check_database), ("redis", _check_redis)):
        if name == "redis" and not settings.REDIS_URL:
            checks[name] = "not configured"
            continue
        try:
            checks[name] = check()
        except Exception as exc:  # any failure of a dependency is "unhealthy", with its reason
            healthy = False
            checks[name] = f"error: {type(exc).__name__}"
    if healthy:  # informational: a table without its index is slower, not down
        checks["vector_indexes"] = _check_vector_indexes()
    return JsonResponse(
        {"status": "ok" if healthy else "unavailable", "checks": checks},
        status=200 if healthy else 503,
    )
