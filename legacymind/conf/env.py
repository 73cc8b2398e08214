"""Environment readers that fail at start-up with a message naming the variable."""

from __future__ import annotations

import re
from typing import Any

import environ
from django.core.exceptions import ImproperlyConfigured

from legacymind.conf.flags import flag

# The original's names (SurrealMind, specs 000-002) for settings that follow the project's
# scheme now (docs/configuration.md): the old name is read when the new one is not set.
ALIASES = {
    "THINK_TAG_WHITELIST": "SURR_THINK_TAG_WHITELIST",
    "THINK_ENHANCE": "SURR_THINK_ENHANCE",
    "THINK_SUBMODE_RETRIEVAL": "SURR_SUBMODE_RETRIEVAL",
    "THINK_PERSIST_VERIFICATION": "SURR_PERSIST_VERIFICATION",
    **{f"THINK_INJECT_{n}": f"SURR_INJECT_{n}" for n in ("T1", "T2", "T3", "FLOOR")},
    "THINK_INJECT_EF_SEARCH": "SURR_INJECT_EF_SEARCH",
    "THINK_INJECT_BACKFILL_MAX": "SURR_INJECT_BACKFILL_MAX",
    **{f"THINK_VERIFY_{n}": f"SURR_VERIFY_{n}" for n in ("TOPK", "MIN_SIM", "EVIDENCE_LIMIT")},
    "THINK_VERIFY_PATTERNS": "SURR_VERIFY_PATTERNS",
    **{
        f"THINK_ORBITAL_{n}": f"SURR_ORBITAL_{n}"
        for n in (
            "W_SIMILARITY",
            "W_RECENCY",
            "W_SIGNIFICANCE",
            "W_ACCESS",
            "HALF_LIFE_DAYS",
            "ACCESS_SATURATION",
        )
    },
    "KG_CANDIDATES": "SURR_KG_CANDIDATES",
    **{
        f"KG_CANDIDATES_THINK_{n}": f"SURR_KG_CANDIDATES_THINK_{n}"
        for n in ("CONVO", "PLAN", "DEBUG", "BUILD", "STUCK")
    },
    "KG_TOUCH_FLUSH_SECONDS": "SURR_TOUCH_FLUSH_SECONDS",
    "KG_TOUCH_LOCK_MS": "SURR_TOUCH_LOCK_MS",
    **{
        f"INNER_VOICE_{n}": f"SURR_INNER_VOICE_{n}" for n in ("MODEL", "TEMP", "HISTORY", "TIMEOUT")
    },
    **{
        f"IV_HEURISTIC_{n}": f"SURR_IV_HEURISTIC_{n}"
        for n in ("FALLBACK", "MAX_ENTITIES", "MAX_EDGES")
    },
    "EMBEDDING_RPS": "SURR_EMBED_RPS",
}


class Env(environ.Env):  # type: ignore[misc]
    """django-environ's reader, which also reads a setting's old name (``ALIASES``)."""

    def get_value(self, var: str, *args: Any, **kwargs: Any) -> Any:
        return super().get_value(alias_resolved(var, self.ENVIRON), *args, **kwargs)


def alias_resolved(name: str, environ_: Any) -> str:
    """``name``, or its old name when only that is set; both set to different values stops
    start-up (which one was meant?)."""
    old = ALIASES.get(name)
    if old is None or old not in environ_:
        return name
    if name not in environ_:
        return old
    if environ_[name] != environ_[old]:
        raise ImproperlyConfigured(
            f"{name} and its old name {old} are both set, to different values: keep {name}"
        )
    return name


env = Env()


def env_choice(name: str, default: str, allowed: tuple[str, ...]) -> str:
    value = env.str(name, default=default).strip().lower()
    if value not in allowed:
        raise ImproperlyConfigured(f"{name}={value!r} is not one of {', '.join(allowed)}")
    return value


def env_float(name: str, default: float, *, low: float, high: float) -> float:
    # Not env.float: django-environ drops every character that is not a digit, "." or "-"
    # before parsing, so 0.7x read as 0.7, 1,5 as 1.5 and 5e-1 failed as "5-1".
    raw = env.str(name, default="").strip()
    try:
        value = float(raw) if raw else default
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a number") from None
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
    try:
        return flag(name, env.str(name, default=""), default)
    except ValueError as exc:
        raise ImproperlyConfigured(str(exc)) from exc


_PERIODS = ("s", "sec", "second", "m", "min", "minute", "h", "hour", "d", "day")


def env_rate(name: str) -> str:
    """A DRF rate such as ``100/minute``, or "" for none; a malformed one fails at start-up
    (DRF would only fail at the first request)."""
    raw = env.str(name, default="").strip()
    if not raw:
        return ""
    count, _, period = raw.partition("/")
    if not count.isdecimal() or int(count) < 1 or period.lower() not in _PERIODS:
        raise ImproperlyConfigured(
            f"{name}={raw!r} is not a rate like 100/minute (N/second|minute|hour|day)"
        )
    return f"{int(count)}/{period.lower()}"


def env_pg_size(name: str, default: str) -> str:
    """A Postgres memory size such as 512MB, passed on to the server as it is: checked here,
    where a bad one would otherwise fail later with Postgres' own message."""
    value = env.str(name, default=default)
    if not re.fullmatch(r"\d+(kB|MB|GB)", value):
        raise ImproperlyConfigured(f"{name} must be a size such as {default} (kB, MB or GB)")
    return value


# .env.example's secrets start with this. A copy left unchanged passes docker-compose's `:?`
# checks, and its keys are public: anyone could forge sessions, CSRF tokens and agent state.
PLACEHOLDER_PREFIX = "change-me"


def env_secret(name: str, *, dev_value: str) -> str:
    """A signing key. With DJANGO_DEBUG off it must be set, and not to .env.example's
    placeholder; in debug mode an unset one is ``dev_value``."""
    value = env.str(name, default="")
    debug = env_bool("DJANGO_DEBUG", False)
    if debug:
        return value or dev_value
    if not value:
        raise ImproperlyConfigured(f"{name} must be set when DJANGO_DEBUG is off")
    if value.strip().lower().startswith(PLACEHOLDER_PREFIX):
        raise ImproperlyConfigured(
            f"{name} still holds .env.example's placeholder {value!r}: set a long random value "
            "(e.g. python -c 'import secrets; print(secrets.token_urlsafe(50))')"
        )
    return value
