"""Batch writes of vectors: one UPDATE for a batch of rows, fed by a binary COPY, with the
checks ``reembed`` needs against edits made meanwhile (``RowGuard``). The columns and the
searches are in ``legacymind.vectors.search``."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
from django.db import connection, models
from django.db.backends.utils import CursorWrapper

_PGCOPY_HEADER = b"PGCOPY\n\xff\r\n\x00" + bytes(8)  # signature, flags, no header extension
_PGCOPY_TRAILER = b"\xff\xff"


def _copy_payload(
    pks: Sequence[Any], matrix: np.ndarray, pk_type: str, digests: Sequence[bytes] | None = None
) -> bytes:
    """``COPY ... (FORMAT BINARY)`` data for (pk, vector) rows, or (pk, digest, vector) rows
    with ``digests`` (16 bytes each, a ``uuid`` column), laid out by numpy in one go.

    Formatting vectors as text costs ~0.5 ms a row in Python (384 floats), more than embedding
    them with the hash provider; the binary layout is a copy of the float32 buffer.
    """
    count, dim = matrix.shape
    if pk_type == "uuid":
        pk_dtype, pk_values = "S16", [pk.bytes for pk in pks]
    elif pk_type == "bigint":
        pk_dtype, pk_values = ">i8", list(pks)
    else:  # pragma: no cover - every embedded table has a bigint or uuid key
        raise ValueError(f"unsupported primary key type {pk_type}")
    digest_fields = [("digest_len", ">i4"), ("digest", "S16")] if digests is not None else []
    rows = np.zeros(
        count,
        dtype=[
            ("fields", ">i2"),
            ("pk_len", ">i4"),
            ("pk", pk_dtype),
            *digest_fields,
            ("vec_len", ">i4"),
            ("dim", ">i2"),
            ("unused", ">i2"),
            ("vec", ">f4", (dim,)),
        ],
    )
    rows["fields"] = 3 if digests is not None else 2
    rows["pk_len"] = np.dtype(pk_dtype).itemsize
    rows["pk"] = pk_values
    if digests is not None:
        rows["digest_len"] = 16
        rows["digest"] = list(digests)
    rows["vec_len"] = 4 + 4 * dim  # pgvector's binary form: int16 dim, int16 unused, floats
    rows["dim"] = dim
    rows["vec"] = matrix
    return _PGCOPY_HEADER + rows.tobytes() + _PGCOPY_TRAILER


@dataclass(frozen=True)
class RowGuard:
    """What a row must still be for ``vectors_store`` to write it, checked by the UPDATE itself
    (a concurrent change is re-checked against the row's latest version, EvalPlanQual): the
    md5 of its text ``columns`` equals the row's digest (``text_digest`` of what was read and
    embedded), and it matches ``wanted`` (a filter on the table's own columns)."""

    columns: tuple[str, ...]
    digests: Sequence[bytes]  # one per row, in the order of ``pks``
    wanted: models.Q = field(default_factory=models.Q)


def _where(model: type[models.Model], wanted: models.Q) -> tuple[str, list[Any]]:
    """``wanted`` as SQL over ``model``'s table, columns qualified with the table's name
    (empty: every row)."""
    query = model._default_manager.filter(wanted).query
    if not query.where:
        return "", []
    sql, params = query.get_compiler(connection=connection).compile(query.where)
    return sql, list(params)


def text_digest(values: Sequence[str | None]) -> bytes:
    """md5 of text column values as ``RowGuard`` compares them in SQL: joined by U+0001, NULL
    as empty."""
    return hashlib.md5(
        "\x01".join(v or "" for v in values).encode(), usedforsecurity=False
    ).digest()


def vectors_store(
    *,
    model: type[models.Model],
    pks: Sequence[Any],
    matrix: np.ndarray,
    provider: str,
    model_name: str,
    embedded_at: datetime,
    guard: RowGuard | None = None,
) -> int:
    """Write one vector per row and the batch's provenance in a single UPDATE; returns the
    number of rows updated (with a ``guard``, the rows that passed it). Call it inside a
    transaction.

    The vector and ``embedding_dim`` must change in the same statement: a row whose dimension
    still says 384 must hold a 384-d vector, or the partial index ``embedding::halfvec(384)``
    rejects the update.
    """
    if len(pks) != matrix.shape[0]:
        raise ValueError(f"{len(pks)} rows but {matrix.shape[0]} vectors")
    if guard is not None and len(guard.digests) != len(pks):
        raise ValueError(f"{len(pks)} rows but {len(guard.digests)} digests")
    if not len(pks):
        return 0
    meta = model._meta
    assert meta.pk is not None
    pk_type = meta.pk.db_type(connection) or ""
    table = connection.ops.quote_name(meta.db_table)
    scratch = f"legacymind_vectors_{pk_type}"
    conditions, where_params = _conditions(model, table, guard)
    params: list[Any] = [provider, model_name, int(matrix.shape[1]), embedded_at, *where_params]
    with connection.cursor() as cursor:
        _scratch_fill(cursor, scratch, pk_type, pks, matrix, guard)
        # The target table is not aliased: ``_where`` compiles ``guard.wanted`` with the ORM,
        # which qualifies columns with the table's name.
        cursor.execute(
            f"UPDATE {table} SET embedding = b.embedding, "
            "embedding_provider = %s, embedding_model = %s, embedding_dim = %s, "
            f"embedded_at = %s FROM {scratch} AS b WHERE {' AND '.join(conditions)}",
            params,
        )
        return int(cursor.rowcount)


def _conditions(
    model: type[models.Model], table: str, guard: RowGuard | None
) -> tuple[list[str], list[Any]]:
    """The UPDATE's join on the scratch table and, with a ``guard``, its checks; and their
    parameters."""
    qn = connection.ops.quote_name
    meta = model._meta
    assert meta.pk is not None
    conditions = [f"{table}.{qn(meta.pk.column or 'id')} = b.pk"]
    params: list[Any] = []
    if guard is not None:
        text = ", ".join(f"coalesce({table}.{qn(c)}::text, '')" for c in guard.columns)
        conditions.append(f"md5(concat_ws(chr(1), {text}))::uuid = b.digest")
        where, where_params = _where(model, guard.wanted)
        if where:
            conditions.append(f"({where})")
            params.extend(where_params)
    return conditions, params


def _scratch_fill(
    cursor: CursorWrapper,
    scratch: str,
    pk_type: str,
    pks: Sequence[Any],
    matrix: np.ndarray,
    guard: RowGuard | None,
) -> None:
    """Load the batch into the session's scratch table (one binary COPY) and analyse it."""
    cursor.execute(
        f"CREATE TEMP TABLE IF NOT EXISTS {scratch} (pk {pk_type} PRIMARY KEY, "
        "digest uuid, embedding vector) ON COMMIT DELETE ROWS"
    )
    cursor.execute(f"DELETE FROM {scratch}")  # an outer transaction may span batches
    payload = _copy_payload(
        pks,
        np.asarray(matrix, dtype=np.float32),
        pk_type,
        guard.digests if guard is not None else None,
    )
    columns = "pk, digest, embedding" if guard is not None else "pk, embedding"
    with cursor.cursor.copy(f"COPY {scratch} ({columns}) FROM STDIN (FORMAT BINARY)") as cp:
        cp.write(payload)
    # Without statistics the planner guesses thousands of rows and joins by scanning the
    # whole embedded table for every batch.
    cursor.execute(f"ANALYZE {scratch}")
