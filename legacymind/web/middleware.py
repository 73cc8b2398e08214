"""Request checks that every view shares."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest

from legacymind.errors import json_error, outage, wants_json
from legacymind.validators import NUL_MESSAGE


class RefuseNulInQuery:
    """A query string with U+0000 in a name or value is a 400 before any view runs.

    Postgres can neither store nor compare NUL, so such a value reaching a lookup failed in the
    database as a 500: in the admin's list filters (``?entity_type=%00``) as in any API filter a
    view forgot to validate. No real request carries one.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        query = request.META.get("QUERY_STRING", "")
        if "%00" in query or "\x00" in query:
            bad = sorted(
                name or "query"
                for name, values in request.GET.lists()
                if "\x00" in name or any("\x00" in v for v in values)
            )
            if bad:
                return _refuse(request, bad)
        return self.get_response(request)


def _refuse(request: HttpRequest, names: list[str]) -> HttpResponse:
    if wants_json(request):
        fields = {name.replace("\x00", "\\0"): [NUL_MESSAGE] for name in names}
        return json_error(request, 400, f"Invalid input. {NUL_MESSAGE}", fields=fields)
    return HttpResponseBadRequest(NUL_MESSAGE, content_type="text/plain; charset=utf-8")


class OutageUnavailable:
    """A page (or a JSON view outside DRF) whose database went away or refused a statement, or
    whose Redis cache (sign-in's failure counter, the agent's guards) cannot be reached,
    answers 503 with a plain sentence and one WARNING line, as the API's exception handler
    does, instead of a 500 and a traceback. The answer is plain text: a page's template may
    itself need the database (the signed-in user). Pages that can keep the visitor's input
    (the journal, the inner voice's question) catch the outage themselves and say it in the
    form."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        detail = outage(exception, path=request.path)
        if detail is None:
            return None
        if wants_json(request):
            return json_error(request, 503, detail)
        return HttpResponse(detail, status=503, content_type="text/plain; charset=utf-8")
