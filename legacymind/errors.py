"""The API error envelope: ``{"error_code", "detail", "fields"}`` for every error status."""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import InterfaceError, OperationalError
from django.http import Http404, HttpResponse, HttpResponsePermanentRedirect, JsonResponse
from django.urls import is_valid_path
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

logger = logging.getLogger("legacymind.errors")

DATABASE_UNAVAILABLE = "The database is unavailable; try again shortly."


class ServiceError(Exception):
    """Raised by services for failures the API maps to a status and an error code."""

    status_code: int = status.HTTP_400_BAD_REQUEST
    error_code: str = "invalid"
    # What a client is told instead of ``detail`` when the detail is the operator's business
    # (a provider's address, its error); the detail then goes to the log.
    public_detail: str | None = None

    def __init__(self, detail: str, *, fields: dict[str, Any] | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.fields = fields or {}


class Unavailable(ServiceError):
    """A dependency (embedding or chat provider, database) could not do its part."""

    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    error_code = "service_unavailable"


class Conflict(ServiceError):
    status_code = status.HTTP_409_CONFLICT
    error_code = "conflict"


class NotFound(ServiceError):
    status_code = status.HTTP_404_NOT_FOUND
    error_code = "not_found"


_CODES = {
    400: "invalid",
    401: "not_authenticated",
    403: "permission_denied",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    409: "conflict",
    410: "gone",
    413: "too_large",
    415: "unsupported_media_type",
    429: "throttled",
    503: "service_unavailable",
}


def envelope(status_code: int, detail: str, *, code: str | None = None, fields: Any = None) -> dict:
    return {
        "error_code": code or _CODES.get(status_code, "error"),
        "detail": detail,
        "fields": fields or {},
    }


def _flatten(data: Any) -> str:
    if isinstance(data, list) and data:
        return _flatten(data[0])
    if isinstance(data, dict) and data:
        key, value = next(iter(data.items()))
        return f"{key}: {_flatten(value)}"
    return str(data)


def _too_large() -> str:
    return f"Request body larger than {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes."


def redis_down(exc: Exception) -> bool:
    import redis

    return isinstance(exc, redis.ConnectionError | redis.TimeoutError)


def _redis_address() -> str:
    """REDIS_URL without its password, for the log."""
    from urllib.parse import urlsplit

    if not settings.REDIS_URL:
        return "(REDIS_URL unset)"
    parts = urlsplit(settings.REDIS_URL)
    if parts.scheme == "unix":
        return parts.path
    host = f"[{parts.hostname}]" if ":" in (parts.hostname or "") else parts.hostname
    return f"{host}:{parts.port or 6379}{parts.path}"


def outage(exc: Exception, *, path: str) -> str | None:
    """The public sentence for a retryable outage that ``exc`` stands for, logged once for the
    operator (one WARNING line, no traceback); None when ``exc`` is no outage.

    Redis down: the cache (rate guards, throttles, the agent's idempotency store); the client
    never sees the address, the log does. The database gone (restart, failover, network) or a
    statement refused (a timeout, a deadlock): services write inside transaction.atomic(), so
    the failed request left nothing behind."""
    if redis_down(exc):
        logger.warning("redis at %s unreachable on %s: %s", _redis_address(), path, exc)
        return "A service this request needs is unavailable; try again shortly."
    if isinstance(exc, OperationalError | InterfaceError):
        reason = " ".join(str(exc).split())  # psycopg's messages span lines
        logger.warning("database error on %s: %s", path, reason)
        return DATABASE_UNAVAILABLE
    return None


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    detail = outage(exc, path=getattr(context.get("request"), "path", "?"))
    if detail is not None:  # retryable: a 503 in the envelope, not a 500 and a traceback
        return Response(envelope(503, detail), status=503)
    if isinstance(exc, ServiceError):
        detail = exc.detail
        if exc.public_detail is not None:
            logger.warning("%s: %s", exc.error_code, exc.detail)
            detail = exc.public_detail
        body = envelope(exc.status_code, detail, code=exc.error_code, fields=exc.fields)
        return Response(body, status=exc.status_code)
    if isinstance(exc, RequestDataTooBig):
        # Raised by request.data. Left to Django it became handler400's page, or in DEBUG the
        # technical HTML page: neither is the envelope.
        return Response(envelope(413, _too_large()), status=413)
    if isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(
            exc.message_dict if hasattr(exc, "error_dict") else exc.messages
        )
    elif isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()

    response = drf_exception_handler(exc, context)
    if response is None:
        return None  # a real bug: Django's 500 handler (no stack trace unless DEBUG)
    assert isinstance(exc, exceptions.APIException)
    if isinstance(exc, exceptions.ValidationError):
        fields = exc.detail if isinstance(exc.detail, dict) else {"non_field_errors": exc.detail}
        body = envelope(400, f"Invalid input. {_flatten(fields)}", code="invalid", fields=fields)
    else:
        codes = exc.get_codes()
        code = codes if isinstance(codes, str) else None
        body = envelope(response.status_code, str(exc.detail), code=code)
    response.data = body
    return response


def json_error(
    request: Any, status_code: int, detail: str, *, fields: Any = None, code: str | None = None
) -> JsonResponse:
    return JsonResponse(envelope(status_code, detail, fields=fields, code=code), status=status_code)


def wants_json(request: Any) -> bool:
    """The API (and the agent's JSON endpoints outside /api/) answers errors in the envelope;
    pages answer with Django's HTML pages."""
    return (
        request.path.startswith("/api/")
        or request.content_type == "application/json"
        or "application/json" in request.headers.get("Accept", "")
    )


def handler400(request: Any, exception: Exception | None = None) -> HttpResponse:
    """A request Django refuses before or outside a DRF view (SuspiciousOperation): a body over
    DATA_UPLOAD_MAX_MEMORY_SIZE, too many form fields, a bad Host header, ..."""
    if wants_json(request):
        if isinstance(exception, RequestDataTooBig):
            return json_error(request, 413, _too_large())
        return json_error(request, 400, "Bad request.", code="bad_request")
    from django.views.defaults import bad_request

    return bad_request(request, exception)  # type: ignore[arg-type]


@csrf_exempt  # it changes nothing; else a POST without a CSRF cookie was a 403 HTML page
def not_found(request: Any) -> HttpResponse:
    """The last route under the API's prefixes: in DEBUG Django answers an unknown path with its
    technical HTML page, not handler404, and the API must keep its envelope there too.

    Matching every path, this route also hides APPEND_SLASH's redirect from CommonMiddleware,
    so it redirects itself. Only GET and HEAD: a redirected POST loses its body (Django's own
    redirect raised RuntimeError in DEBUG, a 500), so other methods get the path to use.
    """
    slashed = _with_slash(request)
    if slashed is not None and request.method in ("GET", "HEAD"):
        return HttpResponsePermanentRedirect(request.get_full_path(force_append_slash=True))
    detail = "Not found." if slashed is None else f"Not found. Did you mean {slashed}?"
    return json_error(request, 404, detail)


def _with_slash(request: Any) -> str | None:
    path = request.path_info
    if not settings.APPEND_SLASH or path.endswith("/"):
        return None
    match = is_valid_path(f"{path}/", getattr(request, "urlconf", None))
    if not match or match.func is not_found:
        return None
    return f"{request.path}/"


def handler404(request: Any, exception: Exception | None = None) -> JsonResponse:
    if wants_json(request):
        return json_error(request, 404, "Not found.")
    from django.views.defaults import page_not_found

    return page_not_found(request, exception)  # type: ignore[arg-type,return-value]


def handler500(request: Any) -> JsonResponse:
    logger.error("unhandled error on %s", request.path)
    if wants_json(request):
        return json_error(request, 500, "Internal server error.")
    from django.views.defaults import server_error

    return server_error(request)  # type: ignore[return-value]
