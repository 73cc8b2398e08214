from __future__ import annotations

from typing import Any

from rest_framework import serializers
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request

# Far past any real collection, and far below Postgres' bigint OFFSET (an offset past that was a
# 500). One bound for every paged endpoint.
MAX_OFFSET = 1_000_000_000


class Pagination(LimitOffsetPagination):
    """``?limit=&offset=`` like the original tools; capped so one request stays cheap.

    DRF's own class quietly uses the default for a limit or offset it cannot read. Here a value
    that is not a whole number in range is a 400 naming it; a limit above the cap gives the cap.
    """

    default_limit = 50
    max_limit = 200

    def get_limit(self, request: Request) -> int:
        limit = _whole(request, self.limit_query_param, low=1, high=None)
        if limit is None:
            return self.default_limit
        return min(limit, self.max_limit)

    def get_offset(self, request: Request) -> int:
        offset = _whole(request, self.offset_query_param, low=0, high=MAX_OFFSET)
        return offset or 0

    def get_paginated_response_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        paginated = super().get_paginated_response_schema(schema)
        for link in ("next", "previous"):
            # DRF writes OpenAPI 3.0's `nullable`, which 3.1 (JSON Schema) does not have: a
            # strict 3.1 validator refused every last page's "next": null.
            prop = paginated["properties"][link]
            del prop["nullable"]
            prop["type"] = ["string", "null"]
        return paginated

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        limit, offset = super().get_schema_operation_parameters(view)
        limit["schema"].update(minimum=1, default=self.default_limit)
        limit["description"] = (
            f"Rows per page, 1 or more (above {self.max_limit} gives {self.max_limit})."
        )
        offset["schema"].update(minimum=0, maximum=MAX_OFFSET, default=0)
        return [limit, offset]


def _whole(request: Request, name: str, *, low: int, high: int | None) -> int | None:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return None
    field = serializers.IntegerField(min_value=low, max_value=high)
    try:
        return int(field.run_validation(raw))
    except serializers.ValidationError as exc:
        raise serializers.ValidationError({name: exc.detail}) from exc
