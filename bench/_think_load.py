"""The think benchmark under load: a Celery worker and gunicorn in their own processes on the
bench database and the run's Redis, and the queue the worker drains. Imported by bench/think.py
after ``_common`` has set Django up."""

from __future__ import annotations

import atexit
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from _common import ROOT, percentile
from django.db import connection


def child_env() -> dict[str, str]:
    """Environment for the worker and gunicorn: the bench database, the same Redis."""
    db = connection.settings_dict
    return {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}@/{db['NAME']}?host={db['HOST']}",
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
    import redis

    return int(redis.Redis.from_url(os.environ["REDIS_URL"]).llen("celery"))


def drain(timeout: float = 600) -> float:
    """Seconds until the worker has taken every queued task."""
    started = time.perf_counter()
    while queued() and time.perf_counter() - started < timeout:
        time.sleep(0.1)
    return time.perf_counter() - started


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def throughput(
    texts: list[str], seconds: float, *, token: str, hint: str, clients: int = 16
) -> tuple[list[str], float]:
    """think at scale 3 under gunicorn (2 sync workers) with ``clients`` concurrent clients."""
    import httpx

    port = free_port()
    env = child_env()
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "gunicorn"), "legacymind.wsgi:application",
         "--workers", "2", "--bind", f"127.0.0.1:{port}", "--log-level", "warning"],
        cwd=ROOT, env=env,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/api/v1/think"
    headers = {"Authorization": f"Token {token}"}
    try:
        for _ in range(200):
            try:
                httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        latencies: list[float] = []
        errors: list[int] = []
        lock = threading.Lock()
        stop = time.perf_counter() + seconds

        def client(offset: int) -> None:
            with httpx.Client(headers=headers, timeout=30) as http:
                i = offset
                while time.perf_counter() < stop:
                    body = {"content": texts[i % len(texts)], "hint": hint, "injection_scale": 3}
                    started = time.perf_counter()
                    r = http.post(url, json=body)
                    ms = (time.perf_counter() - started) * 1000
                    with lock:
                        if r.status_code == 201:
                            latencies.append(ms)
                        else:
                            errors.append(r.status_code)
                            if len(errors) == 1:
                                print(f"first error {r.status_code}: {r.text[:300]}", flush=True)
                    i += clients

        for offset in range(clients):  # warm both workers first
            client_warm = httpx.post(
                url, json={"content": texts[offset], "hint": hint}, headers=headers
            )
            assert client_warm.status_code == 201, client_warm.text
        started = time.perf_counter()
        threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        ended = time.perf_counter()
        elapsed = ended - started
        backlog = queued()
    finally:
        server.terminate()
        server.wait(timeout=30)
    drain()
    drained = time.perf_counter() - ended
    rps = len(latencies) / elapsed
    sustained = len(latencies) / (elapsed + drained)
    return [
        f"Throughput under gunicorn (2 sync workers, DB_CONN_MAX_AGE=60) and one Celery "
        f"worker, {clients} concurrent clients for {elapsed:.0f} s, think at scale 3: "
        f"**{rps:.0f} requests/s** ({len(latencies)} ok, {len(errors)} errors), latency under "
        f"load p50 {percentile(latencies, 50):.1f} ms, p95 {percentile(latencies, 95):.1f} ms. "
        f"The worker had {backlog} access-bump tasks queued at the end and needed {drained:.1f} s "
        f"after it to take them all: {sustained:.0f} thoughts/s including that work.",
        "",
    ], rps
