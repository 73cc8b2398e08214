"""The query vector on the wire: in pgvector's binary form, on a cursor that binds parameters
on the server (Django's cursors bind on the client, as text)."""

from __future__ import annotations

import struct
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, cast

import numpy as np
import psycopg
from django.db import connections
from django.db.backends.postgresql.psycopg_any import register_tzloader
from psycopg.adapt import Dumper
from psycopg.postgres import types as pg_types
from psycopg.pq import Format


class BinaryVector:
    """A query vector in pgvector's binary wire format (dimension, a zero, then float32s in
    network order), for ``binding_cursor``. The text literal a client-side cursor sends costs
    ~0.08 ms to format per query and the server parses it once per use (three per search):
    in binary a search at 100k rows took 1.05-1.15 ms instead of 1.40-1.44
    (docs/benchmarks.md, Retrieval)."""

    __slots__ = ("data",)

    def __init__(self, vector: Sequence[float]) -> None:
        values = np.asarray(vector, dtype=">f4")
        if values.ndim != 1 or values.size == 0 or values.size > _MAX_DIM:
            raise ValueError(f"a query vector must have 1 to {_MAX_DIM} values")
        self.data = _HEADER.pack(values.size, 0) + values.tobytes()


TIMESTAMPTZ_OID = pg_types["timestamptz"].oid
_HEADER = struct.Struct(">HH")
_MAX_DIM = 16000  # pgvector's VECTOR_MAX_DIM


class _BinaryVectorDumper(Dumper):
    format = Format.BINARY
    # Unknown: each slot's cast (``_query_vector``) types the parameter as vector(N), which a
    # parameter in binary needs, since vector and halfvec have different binary forms.
    oid = 0

    def dump(self, obj: BinaryVector) -> bytes:
        return obj.data


@contextmanager
def binding_cursor(using: str) -> Iterator[Any]:
    """A cursor of the ``using`` connection that binds parameters on the server, so that a
    ``BinaryVector`` goes in binary; Django's own cursors bind on the client (text only). It
    is wrapped as ``connection.cursor()`` wraps its own: database errors become Django's, and
    the query is logged and counted (DEBUG, ``CaptureQueriesContext``, execute wrappers).
    Nothing is prepared while the connection's ``prepare_threshold`` is Django's default,
    None: every search is planned with its own values, as with client-side binding (a
    DATABASE_URL that sets a threshold opts into generic plans for these searches too)."""
    connection = connections[using]
    connection.close_if_health_check_failed()
    connection.ensure_connection()
    with connection.wrap_database_errors:
        # psycopg's own Cursor binds on the server (Django's ServerBindingCursor adds only
        # callproc, and django-stubs type it as psycopg2's).
        raw = psycopg.Cursor(connection.connection)
    # On this cursor's own adapters map: only its searches see the binary dumper.
    raw.adapters.register_dumper(BinaryVector, _BinaryVectorDumper)
    # As Django's create_cursor: timestamps in the connection's time zone when it changed.
    loader = connection.connection.adapters.get_loader(TIMESTAMPTZ_OID, Format.TEXT)
    if connection.timezone != getattr(loader, "timezone", None):
        register_tzloader(connection.timezone, raw)
    connection.validate_thread_sharing()
    wrap = connection.make_debug_cursor if connection.queries_logged else connection.make_cursor
    cursor = wrap(cast(Any, raw))  # django-stubs expect a CursorWrapper: it takes the raw one
    with cursor:
        yield cursor


def vector_literal(vector: Sequence[float]) -> str:
    """The query vector as pgvector text, float32 digits only: about three times faster to
    format and half the bytes of pgvector's own ``str(float)`` rendering, per query."""
    values = np.asarray(vector, dtype=np.float32).tolist()
    return "[" + ",".join([f"{v:.9g}" for v in values]) + "]"
