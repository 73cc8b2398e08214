from __future__ import annotations

from typing import Any

from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.request import Request

MODERATE = "kg.moderate"


class IsModerator(BasePermission):
    """Members of "KG moderators" (or anyone granted ``kg.moderate``)."""

    message = "Only knowledge-graph moderators may do this."

    def has_permission(self, request: Request, view: Any) -> bool:
        user = request.user
        return bool(user and user.is_authenticated and user.has_perm(MODERATE))


class ReadOrModerate(BasePermission):
    """Any signed-in user reads; moderators write."""

    message = "Only knowledge-graph moderators may change the graph."

    def has_permission(self, request: Request, view: Any) -> bool:
        user = request.user
        if not (user and user.is_authenticated):
            return False
        return request.method in SAFE_METHODS or user.has_perm(MODERATE)
