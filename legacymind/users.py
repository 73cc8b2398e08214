"""Who is asking: the user type every selector and service takes."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.core.exceptions import PermissionDenied

Viewer = AbstractBaseUser | AnonymousUser


def viewer_id(viewer: Viewer) -> int | None:
    """The viewer's user id; None for an anonymous one."""
    return int(viewer.pk) if viewer.is_authenticated else None


def signed_in(request: Any) -> User:
    """The request's user, who every door but health and the schema requires to be signed in
    (the API's permission and the pages' login check run first)."""
    user = request.user
    if not isinstance(user, User) or not user.is_authenticated:
        raise PermissionDenied("Sign in first.")
    return user
