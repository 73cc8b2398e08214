"""Gunicorn's configuration for the web app (gunicorn reads ``./gunicorn.conf.py`` by itself; the
Dockerfile and docker-compose run it from /app, the benchmarks from the checkout).

Threaded workers, not sync ones: a think waits on the embeddings API (OpenAI: ~100-300 ms a
call) and the journaling agent on a chat model (seconds). A sync worker holds its process for
that whole wait, so three of them served at most three requests at a time whatever the CPUs
were doing; a threaded worker serves its other requests meanwhile (docs/benchmarks.md, "Web
concurrency"). With a local or hash embedder the requests are CPU-bound and the two kinds
measured the same.

Each thread keeps its own database connection for ``DB_CONN_MAX_AGE`` seconds, so a web
container holds up to WEB_CONCURRENCY x WEB_THREADS connections: size Postgres's
max_connections (100 by default) for every container and the Celery workers.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import environ

# The settings read .env beside manage.py (the environment wins); so does this file, which
# gunicorn loads before Django: WEB_BIND, WEB_CONCURRENCY, ... set only there were ignored.
environ.Env.read_env(Path(__file__).resolve().parent / ".env", overwrite=False)


def _whole(name: str, default: int, minimum: int) -> int:
    # A bad value stops gunicorn before it forks, naming the variable (as the settings do).
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise SystemExit(f"{name} must be a whole number, got {raw!r}") from None
    if value < minimum:
        raise SystemExit(f"{name} must be at least {minimum}, got {value}")
    return value


wsgi_app = "legacymind.wsgi:application"
bind = os.environ.get("WEB_BIND", "").strip() or "127.0.0.1:8000"
worker_class = "gthread"
workers = _whole("WEB_CONCURRENCY", 3, 1)
threads = _whole("WEB_THREADS", 8, 1)
timeout = _whole("WEB_TIMEOUT", 120, 1)
# Idle keep-alive connections hold a thread's slot in the worker's poller, not the thread.
keepalive = 5
# gunicorn 27 opens a control socket (its management CLI) at one path per user by default, so a
# second gunicorn on the machine (a benchmark's pair, a test beside `make run`) logged an error
# and ran without one. Nothing here uses it; older gunicorns ignore the setting.
control_socket_disable = True
# "-" logs each request to stdout (the container's log); empty turns the access log off.
accesslog = os.environ.get("WEB_ACCESS_LOG", "-").strip() or None
# gunicorn's default format logs the request line with its query string and the Referer, and
# both carry what people search for (/api/v1/kg/search/?q=, /inner-voice/?q=, ...): a log must
# not keep a user's words. The path (%(U)s) without the query, and no Referer; otherwise the
# default's fields, plus the time taken in milliseconds.
access_log_format = '%(h)s %(l)s %(u)s %(t)s "%(m)s %(U)s %(H)s" %(s)s %(b)s "%(a)s" %(M)sms'


# /metrics under several worker processes (agent.metrics): prometheus_client keeps each
# process's samples in files under PROMETHEUS_MULTIPROC_DIR and the view adds them up; without
# it a scrape saw only the counters of whichever process answered. Set here, in the master
# before it forks, so every worker imports prometheus_client with it. Samples left by an
# earlier run would be counted again, so the directory starts empty.
_made: list[Path] = []  # the directory made here, removed when gunicorn stops


def on_starting(server: Any) -> None:
    given = os.environ.get("PROMETHEUS_MULTIPROC_DIR", "").strip()
    if given:
        path = Path(given)
        path.mkdir(parents=True, exist_ok=True)
        for stale in path.glob("*.db"):
            stale.unlink()
    else:
        path = Path(tempfile.mkdtemp(prefix="legacymind-metrics-"))
        _made.append(path)
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(path)


def on_exit(server: Any) -> None:
    for path in _made:
        shutil.rmtree(path, ignore_errors=True)
