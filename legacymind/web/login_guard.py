"""Sign-in guard against password guessing, for every form that signs in with a password (the
browser sign-in page and the admin's login): both authenticate through Django's backends.

Each failed sign-in counts against the pair (username, client address) in the cache (Redis, or
the database cache), and at ``LOGIN_FAILURE_LIMIT`` failures the pair is refused, whatever the
password, until ``LOGIN_FAILURE_WINDOW`` seconds after its first failure. Keying on the pair
keeps an attacker elsewhere from locking the owner out of their own account.
"""

from __future__ import annotations

import hashlib
import math
import time
from typing import Any

from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.signals import user_login_failed
from django.core.cache import cache
from django.core.exceptions import PermissionDenied, ValidationError
from django.dispatch import receiver
from django.http import HttpRequest
from rest_framework.throttling import BaseThrottle

LOCKED_MESSAGE = (
    "Too many failed sign-ins for this account from your address. Try again within {minutes} "
    "minutes."
)


def client_address(request: HttpRequest) -> str:
    """The client's address as the API's throttles see it (``TRUSTED_PROXY_COUNT``)."""
    return BaseThrottle().get_ident(request)  # type: ignore[arg-type]  # it reads only META


def _key(username: str, request: HttpRequest | None) -> str:
    address = client_address(request) if request is not None else ""
    # Hashed: a username may hold characters a cache key may not (memcached-safe, any length).
    digest = hashlib.sha256(f"{username.strip().lower()}\0{address}".encode()).hexdigest()
    return f"login:failures:{digest}"


def failures(username: str, request: HttpRequest | None) -> int:
    """Failures of the pair in its current window."""
    count, ends = cache.get(_key(username, request), (0, 0.0))
    return int(count) if ends > time.time() else 0


def is_locked(username: str | None, request: HttpRequest | None) -> bool:
    limit = settings.LOGIN_FAILURE_LIMIT
    return bool(limit and username is not None and failures(username, request) >= limit)


def locked_message() -> str:
    return LOCKED_MESSAGE.format(minutes=max(1, round(settings.LOGIN_FAILURE_WINDOW / 60)))


@receiver(user_login_failed, dispatch_uid="legacymind.web.login_guard.count")
def _count_failure(
    sender: Any, credentials: dict[str, Any], request: HttpRequest | None = None, **_: Any
) -> None:
    username = credentials.get("username")
    if not settings.LOGIN_FAILURE_LIMIT or username is None:
        return
    key = _key(str(username), request)
    # The window's end is stored with the count: the database cache's incr() would reset the
    # expiry at each failure. Two failures at the same instant may count as one.
    now = time.time()
    count, ends = cache.get(key, (0, 0.0))
    if ends <= now:
        count, ends = 0, now + settings.LOGIN_FAILURE_WINDOW
    cache.set(key, (count + 1, ends), max(1, math.ceil(ends - now)))


class GuardedModelBackend(ModelBackend):
    """Django's username/password backend, refusing a locked (username, address) pair before
    the password is even checked."""

    def authenticate(  # type: ignore[override]
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> Any:
        if is_locked(username, request):
            # Stops every backend; authenticate() then reports a failed sign-in.
            raise PermissionDenied(locked_message())
        return super().authenticate(request, username=username, password=password, **kwargs)


class GuardedFormMixin:
    """For an AuthenticationForm: say that the pair is locked instead of "wrong password"."""

    request: HttpRequest | None
    cleaned_data: dict[str, Any]

    def get_invalid_login_error(self) -> ValidationError:
        if is_locked(self.cleaned_data.get("username"), self.request):
            return ValidationError(locked_message(), code="locked")
        return super().get_invalid_login_error()  # type: ignore[misc]


class SignInForm(GuardedFormMixin, AuthenticationForm):
    pass


class AdminSignInForm(GuardedFormMixin, AdminAuthenticationForm):
    pass
