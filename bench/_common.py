"""Shared set-up of the database benchmarks (retrieval, reembed).

They run against their own database, ``bench_legacymind`` on the same server (the embedded one
in var/pgdata, or DATABASE_URL's), created and migrated on first use and emptied of the tables
they fill: the dev data in ``legacymind`` is never touched. ``BENCH_DATABASE_NAME`` names
another database.

Import this module before anything from Django: it sets Django up.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "legacymind.settings")
os.environ.setdefault("DJANGO_DEBUG", "1")

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402
from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

BENCH_DB = os.environ.get("BENCH_DATABASE_NAME", "bench_legacymind")


def use_bench_database() -> str:
    """Point the default connection at the bench database (created and migrated if needed)."""
    # DEBUG keeps every query in memory and slows each one: never while measuring.
    settings.DEBUG = False
    if connection.settings_dict["NAME"] == BENCH_DB:
        raise SystemExit(f"refusing to benchmark in the application database {BENCH_DB!r}")
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", [BENCH_DB])
        if cursor.fetchone() is None:
            cursor.execute(f"CREATE DATABASE {connection.ops.quote_name(BENCH_DB)}")
    connection.close()
    settings.DATABASES["default"]["NAME"] = BENCH_DB
    connection.settings_dict["NAME"] = BENCH_DB
    call_command("migrate", verbosity=0, interactive=False)
    return BENCH_DB


def raw_connection() -> Any:
    """A separate psycopg connection to the bench database with pgvector's adapters (binary
    COPY of vectors); Django's own connection keeps its text adapters."""
    import psycopg
    from pgvector.psycopg import register_vector

    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    conn = psycopg.connect(**params, autocommit=True)
    register_vector(conn)
    return conn


# The columns a benchmark fills when it loads kg_entity, in COPY order, with their binary types.
ENTITY_COLUMNS = (
    "name, entity_type, description, data, aliases, embedding, embedding_provider, "
    "embedding_model, embedding_dim, embedded_at, significance, access_count, last_accessed, "
    "created_at, updated_at"
)
ENTITY_TYPES = [
    "varchar", "varchar", "text", "jsonb", "varchar[]", "vector", "varchar", "varchar",
    "int4", "timestamptz", "float8", "int4", "timestamptz", "timestamptz", "timestamptz",
]  # fmt: skip


def hnsw_indexes_drop(tables: Sequence[str]) -> list[str]:
    """Drop the HNSW indexes of ``tables``; return their definitions for ``indexes_create``."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = ANY(%s) "
            "AND indexdef LIKE '%%USING hnsw%%'",
            [list(tables)],
        )
        definitions = dict(cursor.fetchall())
        for name in definitions:
            cursor.execute(f"DROP INDEX {name}")
    return list(definitions.values())


def indexes_create(definitions: Iterable[str]) -> None:
    with connection.cursor() as cursor:
        for definition in definitions:
            cursor.execute(definition)


def load_entities(
    rows: Iterable[Sequence[Any]], *, truncate: Sequence[str] = ("kg_entity",)
) -> tuple[dict[str, int], float, float]:
    """Empty ``truncate``, COPY ``rows`` (in ENTITY_COLUMNS order) into kg_entity with binary
    vectors, and rebuild its HNSW indexes afterwards: a bulk build is far cheaper than one
    index insertion per row.

    Returns name -> primary key, the load seconds and the index build seconds.
    """
    definitions = hnsw_indexes_drop(["kg_entity"])
    with connection.cursor() as cursor:
        cursor.execute(f"TRUNCATE {', '.join(truncate)} RESTART IDENTITY CASCADE")
    started = time.perf_counter()
    with raw_connection() as raw, raw.cursor() as cur:
        sql = f"COPY kg_entity ({ENTITY_COLUMNS}) FROM STDIN WITH (FORMAT BINARY)"
        with cur.copy(sql) as copy:
            copy.set_types(ENTITY_TYPES)
            for row in rows:
                copy.write_row(row)
    loaded = time.perf_counter() - started
    started = time.perf_counter()
    indexes_create(definitions)
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE kg_entity")
        cursor.execute("SELECT id, name FROM kg_entity")
        by_name = {name: pk for pk, name in cursor.fetchall()}
    return by_name, loaded, time.perf_counter() - started


def gunicorn_start(
    *options: str, env: Mapping[str, str], wait: float = 30.0
) -> tuple[subprocess.Popen[bytes], str]:
    """gunicorn with the repo's gunicorn.conf.py and ``options`` on a free port of 127.0.0.1,
    its access log off (its cost depends on where the log goes, not on the app), once it
    answers /healthz: the process and its base URL. Stops it and exits if it never answers."""
    import httpx

    from tests.support.redis_server import free_port

    port = free_port()
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "gunicorn"), *options,
         "--bind", f"127.0.0.1:{port}", "--log-level", "warning"],
        cwd=ROOT, env={**env, "WEB_ACCESS_LOG": ""},
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            httpx.get(f"{base}/healthz", timeout=1)
            return server, base
        except httpx.HTTPError:
            time.sleep(0.1)
    server.kill()
    raise SystemExit(f"gunicorn did not answer /healthz within {wait:g} s")


def timed(fn: Callable[..., Any], *args: Any) -> tuple[float, Any]:
    """Milliseconds of one call, and its result."""
    started = time.perf_counter()
    result = fn(*args)
    return (time.perf_counter() - started) * 1000, result


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def median(values: list[float]) -> float:
    return float(statistics.median(values))


def ratio(ours: float, base: float) -> str:
    return f"{ours / base:.2f}x" if base else "n/a"


def reference_loop_ms() -> float:
    """Milliseconds of a fixed pure-Python loop (best of three): how fast this machine runs
    Python today. Runs on these VMs differ by 2-3x from one machine to the next, so figures
    from two runs compare only together with this."""
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        total = 0
        for i in range(1_000_000):
            total += i
        best = min(best, time.perf_counter() - started)
    return best * 1000


def machine() -> str:
    import platform

    return (
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}, reference loop {reference_loop_ms():.0f} ms, "
        f"{huge_pages()}"
    )


def huge_pages() -> str:
    """The system's huge pages (/proc/meminfo): Postgres puts its shared memory, the buffer
    cache the HNSW scans walk, in them when enough are reserved (``huge_pages = try``, its
    default), which made a think's database CPU ~6% lower here (docs/benchmarks.md)."""
    try:
        info = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
        total = int(info["HugePages_Total"])
        taken = total - int(info["HugePages_Free"]) + int(info["HugePages_Rsvd"])
    except (OSError, KeyError, ValueError):
        return "huge pages unknown"
    if not total:
        return "no huge pages reserved"
    return f"huge pages {taken} of {total} taken"
