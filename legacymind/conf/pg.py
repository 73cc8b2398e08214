"""Postgres server and connection sizes, checked against the server's own minimums at start-up:
a size below one passes the format check but fails later, in the server's log (shared_buffers,
when the embedded server starts) or on every connection (maintenance_work_mem)."""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured

from legacymind.conf.env import env_pg_size

_KB = {"kB": 1, "MB": 1024, "GB": 1024 * 1024}


def kilobytes(size: str) -> int:
    """``512MB`` -> 524288: a size ``env_pg_size`` accepted, in kB."""
    for unit, factor in _KB.items():
        if size.endswith(unit):
            return int(size.removesuffix(unit)) * factor
    raise ValueError(f"not a Postgres size: {size!r}")


def env_pg_size_at_least(name: str, default: str, *, minimum: str) -> str:
    value = env_pg_size(name, default)
    if kilobytes(value) < kilobytes(minimum):
        raise ImproperlyConfigured(f"{name}={value} is below Postgres' minimum of {minimum}")
    return value
