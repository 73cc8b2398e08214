from __future__ import annotations

from rest_framework.pagination import LimitOffsetPagination


class Pagination(LimitOffsetPagination):
    """``?limit=&offset=`` like the original tools; capped so one request stays cheap."""

    default_limit = 50
    max_limit = 200
