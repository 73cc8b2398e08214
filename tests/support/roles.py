"""The test's connection acting as a role of its own: no ownership, only the grants given."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection


@contextmanager
def acting_as(name: str, *, grants: tuple[str, ...] = ()) -> Iterator[None]:
    """Create role ``<name>_<database>``, run ``grants`` (``GRANT ... TO {role}``), ``SET ROLE``
    to it for the body, then reset and drop it with what it owns."""
    role = f"{name}_{connection.settings_dict['NAME']}"
    with connection.cursor() as cursor:
        cursor.execute(f"DROP ROLE IF EXISTS {role}")
        cursor.execute(f"CREATE ROLE {role}")
        for grant in grants:
            cursor.execute(grant.format(role=role))
        cursor.execute(f"SET ROLE {role}")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET ROLE")
            cursor.execute(f"DROP OWNED BY {role}")  # its grants and anything it made
            cursor.execute(f"DROP ROLE {role}")
