"""A real Redis for the worker-path tests: 127.0.0.1:6379 when one answers, else a private
``redis-server`` on a free port for the test session."""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def redis_url() -> Iterator[str]:
    if _answers(6379):
        # Database 15 keeps test keys away from anything a developer stores in db 0.
        yield "redis://127.0.0.1:6379/15"
        return
    with private_redis() as url:
        yield url


@contextmanager
def private_redis() -> Iterator[str]:
    """A redis-server of our own on a free port, gone afterwards: on a shared Redis, another
    run's worker could take our tasks."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError(
            "no Redis on 127.0.0.1:6379 and no redis-server binary to start one "
            "(apt-get install -y redis-server)"
        )
    port = free_port()
    workdir = tempfile.mkdtemp(prefix="lm-redis-")
    proc = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            workdir,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while not _answers(port):
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError("redis-server did not start")
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(5)
        shutil.rmtree(workdir, ignore_errors=True)


@contextmanager
def cache_down() -> Iterator[int]:
    """REDIS_URL and the Redis cache at a 127.0.0.1 port where nothing listens (short socket
    timeouts, as the settings give); yields the port."""
    from django.test import override_settings

    port = free_port()
    url = f"redis://127.0.0.1:{port}/7"
    redis_cache = {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": url,
        "OPTIONS": {"socket_connect_timeout": 2, "socket_timeout": 2},
    }
    with override_settings(REDIS_URL=url, CACHES={"default": redis_cache}):
        yield port
