#!/usr/bin/env python
from __future__ import annotations

import os
import sys
import traceback


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "legacymind.settings")
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line
    from django.db import OperationalError

    try:
        # Loading the settings reads the environment: a bad value is the operator's to fix,
        # and the message naming the variable is all they need, not a page of traceback.
        settings.INSTALLED_APPS  # noqa: B018
    except ImproperlyConfigured as exc:
        sys.exit(f"Configuration error: {exc}")
    try:
        if sys.argv[1:2] == ["runserver"]:
            _database_answers()
        execute_from_command_line(sys.argv)
    except OperationalError as exc:
        # A database that cannot be reached was ~100 lines of psycopg and Django frames ending
        # in "Connection refused", naming no setting. An error of a query on an open
        # connection is a different story: its traceback stays.
        if not _while_connecting(exc):
            raise
        sys.exit(_unreachable(exc))


def _database_answers() -> None:
    """Open and close one connection. runserver checks migrations in a thread of the
    autoreloader's child: a failure there printed a traceback and left the server waiting for
    a file to change instead of exiting."""
    from django.db import connections

    try:
        connections["default"].ensure_connection()
    finally:
        connections["default"].close()


def _while_connecting(exc: BaseException) -> bool:
    # Every backend opens its connections in get_new_connection; a query error never passes it.
    frames = traceback.walk_tb(exc.__traceback__)
    return any(frame.f_code.co_name == "get_new_connection" for frame, _ in frames)


def _unreachable(exc: BaseException) -> str:
    """One line: which setting, which address (never the password) and libpq's reason."""
    from django.conf import settings

    db = settings.DATABASES["default"]
    host = str(db.get("HOST") or "localhost")
    if not host.startswith("/"):  # a Unix socket's directory has no port
        host = f"[{host}]" if ":" in host else host
        host = f"{host}:{db.get('PORT') or 5432}"
    source = (
        f"the embedded server in LEGACYMIND_PGDATA={settings.PGDATA_DIR}"
        if settings.EMBEDDED_DB
        else "DATABASE_URL"
    )
    reason = " ".join(str(exc).split())  # libpq's message spans two lines
    return f"Database unreachable: {source} at {host} (database {db.get('NAME')}): {reason}"


if __name__ == "__main__":
    main()
