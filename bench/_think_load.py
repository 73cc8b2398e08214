"""The think benchmark under load: a Celery worker and gunicorn in their own processes on the
bench database and the run's Redis, and the queue the worker drains. Imported by bench/think.py
after ``_common`` has set Django up."""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from http import client as http_client
from pathlib import Path

import psutil
from _common import ROOT, gunicorn_start, percentile
from django.db import connection


def child_env(*, host: str = "", application_name: str = "") -> dict[str, str]:
    """Environment for the worker and gunicorn: the bench database (on the server whose socket
    directory is ``host``, by default this process's), the same Redis."""
    db = connection.settings_dict
    url = f"postgres://{db['USER']}@/{db['NAME']}?host={host or db['HOST']}"
    if application_name:
        url += f"&application_name={application_name}"
    return {
        **os.environ,
        "DATABASE_URL": url,
        "DB_CONN_MAX_AGE": "60",
        "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": os.environ.get("DJANGO_SECRET_KEY", "bench-only-secret"),
        "AGENT_STATE_SECRET": os.environ.get("AGENT_STATE_SECRET", "bench-only-agent-secret"),
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
    }


def start_worker() -> subprocess.Popen[bytes]:
    worker = subprocess.Popen(
        [str(Path(sys.executable).parent / "celery"), "-A", "legacymind", "worker",
         "--pool", "solo", "--loglevel", "warning", "--without-gossip", "--without-mingle"],
        cwd=ROOT, env=child_env(),
    )  # fmt: skip
    atexit.register(lambda: worker.poll() is None and worker.terminate())
    return worker


def queued() -> int:
    """Tasks waiting in Celery's queue plus access bumps waiting for a flush."""
    from kg.services.touches import QUEUE, redis_client

    client = redis_client()
    return int(client.llen("celery")) + int(client.llen(QUEUE))


def drain(timeout: float = 600) -> float:
    """Seconds until the worker has taken every queued task and applied every queued bump."""
    from kg.services.touches import redis_client
    from legacymind.celery import app

    client = redis_client()
    started = time.perf_counter()
    while queued() and time.perf_counter() - started < timeout:
        if not client.llen("celery"):  # bumps left and no task: a flush may have been lost
            app.send_task("thoughts.memories_touch_flush")
        time.sleep(0.5)
    return time.perf_counter() - started


def cpu_seconds(procs: list[psutil.Process]) -> float:
    total = 0.0
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            times = proc.cpu_times()
            total += times.user + times.system
    return total


def cpu_by_part(server: subprocess.Popen[bytes], worker_pid: int) -> dict[str, float]:
    """CPU seconds used so far by each part of the run: gunicorn (master and workers), the
    database backends serving the bench database, the Celery worker, and this process (the
    load generator's client threads)."""
    web = psutil.Process(server.pid)
    backends = [
        p
        for p in psutil.process_iter(["name", "cmdline"])
        if p.info["name"] == "postgres"
        and f" {connection.settings_dict['NAME']} " in " ".join(p.info["cmdline"] or []) + " "
    ]
    return {
        "web": cpu_seconds([web, *web.children(recursive=True)]),
        "database": cpu_seconds(backends),
        "worker": cpu_seconds([psutil.Process(worker_pid)]),
        "load generator": cpu_seconds([psutil.Process()]),
    }


def bench_token(username: str) -> str:
    """The API token of the benchmark's user ``username`` (made on first use)."""
    from django.contrib.auth.models import User
    from rest_framework.authtoken.models import Token

    user, _ = User.objects.get_or_create(username=username)
    token, _ = Token.objects.get_or_create(user=user)
    return token.key


def gunicorn_label(worker_class: str) -> str:
    """How the run's gunicorn serves: the repo's gunicorn.conf.py (threaded workers) with two
    worker processes, or the same with ``--worker-class sync``."""
    if worker_class == "sync":
        return "2 sync workers"
    return f"2 {worker_class} workers x {os.environ.get('WEB_THREADS') or 8} threads"


def throughput(
    texts: list[str],
    seconds: float,
    *,
    token: str,
    hint: str,
    worker_pid: int,
    clients: int = 16,
    worker_class: str = "gthread",
) -> tuple[list[str], float]:
    """think at scale 3 under gunicorn (the repo's gunicorn.conf.py, 2 workers of
    ``worker_class``) with ``clients`` concurrent clients."""
    import httpx

    # gunicorn runs a "sync" worker class with threads > 1 as gthread: the baseline sets 1.
    one_thread = ["--threads", "1"] if worker_class == "sync" else []
    server, base = gunicorn_start(
        "--workers", "2", "--worker-class", worker_class, *one_thread, env=child_env(), wait=20
    )
    url = f"{base}/api/v1/think"
    port = int(base.rsplit(":", 1)[1])
    headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}
    try:
        latencies: list[float] = []
        errors: list[int] = []
        lock = threading.Lock()
        stop = 0.0  # set once the workers are warm: the warm-up is not part of the window

        def client(offset: int) -> None:
            # The standard library's client, the lightest at hand: the load generator shares
            # the machine's CPUs with the server it measures (its share is reported).
            http = http_client.HTTPConnection("127.0.0.1", port, timeout=30)
            i = offset
            while time.perf_counter() < stop:
                body = {"content": texts[i % len(texts)], "hint": hint, "injection_scale": 3}
                started = time.perf_counter()
                http.request("POST", "/api/v1/think", body=json.dumps(body), headers=headers)
                r = http.getresponse()
                text = r.read()
                ms = (time.perf_counter() - started) * 1000
                if r.will_close:  # sync workers close after each response (no keep-alive)
                    http.close()
                with lock:
                    if r.status == 201:
                        latencies.append(ms)
                    else:
                        errors.append(r.status)
                        if len(errors) == 1:
                            print(f"first error {r.status}: {text[:300]!r}", flush=True)
                i += clients

        for offset in range(clients):  # warm both workers first
            client_warm = httpx.post(
                url, json={"content": texts[offset], "hint": hint}, headers=headers
            )
            assert client_warm.status_code == 201, client_warm.text
        cpu_before = cpu_by_part(server, worker_pid)
        started = time.perf_counter()
        stop = started + seconds
        threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        ended = time.perf_counter()
        elapsed = ended - started
        cpu_after = cpu_by_part(server, worker_pid)
        backlog = queued()
    finally:
        server.terminate()
        server.wait(timeout=30)
    drain()
    drained = time.perf_counter() - ended
    rps = len(latencies) / elapsed
    sustained = len(latencies) / (elapsed + drained)
    per_request = {
        part: (cpu_after[part] - cpu_before[part]) * 1000 / max(len(latencies), 1)
        for part in cpu_after
    }
    cpu_line = ", ".join(f"{part} {ms:.1f}" for part, ms in per_request.items())
    return [
        f"Throughput under gunicorn ({gunicorn_label(worker_class)}, DB_CONN_MAX_AGE=60) and one Celery "
        f"worker, {clients} concurrent clients for {elapsed:.0f} s, think at scale 3: "
        f"**{rps:.0f} requests/s** ({len(latencies)} ok, {len(errors)} errors), latency under "
        f"load p50 {percentile(latencies, 50):.1f} ms, p95 {percentile(latencies, 95):.1f} ms. "
        f"The worker had {backlog} tasks and access bumps queued at the end and needed {drained:.1f} s "
        f"after it to take them all: {sustained:.0f} thoughts/s including that work. "
        f"CPU ms per request ({os.cpu_count()} CPUs, {elapsed:.0f} s of load): {cpu_line}; "
        f"{sum(per_request.values()):.1f} in all.",
        "",
    ], rps
