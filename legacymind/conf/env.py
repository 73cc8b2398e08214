"""Environment readers that fail at start-up with a message naming the variable."""

from __future__ import annotations

import environ
from django.core.exceptions import ImproperlyConfigured

env = environ.Env()


def env_choice(name: str, default: str, allowed: tuple[str, ...]) -> str:
    value = env.str(name, default=default).strip().lower()
    if value not in allowed:
        raise ImproperlyConfigured(f"{name}={value!r} is not one of {', '.join(allowed)}")
    return value


def env_float(name: str, default: float, *, low: float, high: float) -> float:
    try:
        value = env.float(name, default=default)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be a number: {exc}") from exc
    if not low <= value <= high:
        raise ImproperlyConfigured(f"{name}={value} is outside {low}..{high}")
    return value


def env_int(name: str, default: int, *, low: int, high: int) -> int:
    try:
        value = env.int(name, default=default)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be an integer: {exc}") from exc
    if not low <= value <= high:
        raise ImproperlyConfigured(f"{name}={value} is outside {low}..{high}")
    return value


def env_bool(name: str, default: bool) -> bool:
    raw = env.str(name, default="").strip().lower()
    if not raw:
        return default
    if raw in ("1", "true", "yes", "on"):
        return True
    if raw in ("0", "false", "no", "off"):
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean (use 1/0, true/false)")
