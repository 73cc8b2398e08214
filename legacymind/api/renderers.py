"""The API's response renderers (REST_FRAMEWORK's DEFAULT_RENDERER_CLASSES)."""

from __future__ import annotations

from typing import Any

from rest_framework import renderers
from rest_framework.request import Request


class BrowsableAPIRenderer(renderers.BrowsableAPIRenderer):
    """DRF's HTML pages of the API (what a signed-in browser gets at /api/v1/).

    To build a list page's filter form DRF asks the view for its queryset, whatever its filter
    backends. Views here filter with their own input serializers, have no filter backends, and
    several read through a selector without a ``get_queryset``: the page was an AssertionError
    (a 500) for ``/api/v1/thoughts/`` and ``/api/v1/kg/candidates/``.
    """

    def get_filter_form(self, data: Any, view: Any, request: Request) -> str | None:
        if not getattr(view, "filter_backends", None):
            return None  # DRF's would render nothing here either, once it had the queryset
        return super().get_filter_form(data, view, request)  # type: ignore[no-any-return]
