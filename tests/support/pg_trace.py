"""What a real connection sends, read from libpq's own protocol trace (``PQtrace``): the SQL of
each simple Query and each Parse of the extended protocol, in order; and a second connection
to the same database, outside Django's, to look from the side."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
from django.db import connection

# A frontend line of the trace: F <length> Query "<sql>" or F <length> Parse "<name>" "<sql>" ...
_SENT = re.compile(r'^F\t\d+\t(?:Query|Parse)\t(?: "[^"]*")? ?"(.*)"')


@contextmanager
def sent_sql(path: Path) -> Iterator[list[str]]:
    """The SQL the default connection sends inside the block (the list fills on leaving it);
    ``path`` holds the raw trace."""
    from psycopg import pq

    sent: list[str] = []
    connection.ensure_connection()
    pgconn = connection.connection.pgconn
    with path.open("w") as out:
        pgconn.trace(out.fileno())
        pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS)
        try:
            yield sent
        finally:
            pgconn.untrace()
    for line in path.read_text().splitlines():
        found = _SENT.match(line)
        if found:
            sent.append(found.group(1))


def another_connection() -> psycopg.Connection:
    """A new autocommit connection to the default database, not Django's."""
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    return psycopg.connect(**params, autocommit=True)
