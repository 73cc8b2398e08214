"""The embedded Postgres (pgserver) shared by several processes on one data directory.

Every test works on a fresh directory of its own under /tmp (never var/pgdata) and runs real
holder processes: each starts or joins the server through ``legacymind.db.embedded.start``,
connects, reports the postmaster's pid, and holds its handle until told to exit.
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

ROOT = Path(__file__).resolve().parents[2]
HOLDER = """
import json, sys
from pathlib import Path
import psycopg
from legacymind.db import embedded as embedded_db

pgdata = Path(sys.argv[1])
server_settings = json.loads(sys.argv[2]) if len(sys.argv) > 2 else None
info = embedded_db.start(pgdata, server_settings=server_settings)
with psycopg.connect(host=info["HOST"], user="postgres", dbname=info["NAME"]) as conn:
    one = conn.execute("SELECT 1").fetchone()[0]
    vector = conn.execute(
        "SELECT count(*) FROM pg_available_extensions WHERE name = 'vector'"
    ).fetchone()[0]
    buffers = conn.execute("SHOW shared_buffers").fetchone()[0]
postmaster = int((pgdata / "postmaster.pid").read_text().split()[0])
print(json.dumps({"postmaster": postmaster, "one": one, "vector": vector,
                  "shared_buffers": buffers}), flush=True)
sys.stdin.read()  # hold the handle until stdin closes (a clean exit) or a signal arrives
"""


@pytest.fixture
def pgdata() -> Iterator[Path]:
    base = Path(tempfile.mkdtemp(prefix="lm-pgtest-", dir="/tmp"))
    data = base / "pgdata"
    try:
        yield data
    finally:
        if (data / "postmaster.pid").exists():
            subprocess.run(
                [sys.executable, "-m", "legacymind.db.embedded", "stop", str(data)],
                cwd=ROOT,
                env=_env(),
                capture_output=True,
                timeout=60,
            )
        shutil.rmtree(base, ignore_errors=True)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    # The lock directory then sits beside the test's data directory, not the shared var/run.
    env.pop("XDG_RUNTIME_DIR", None)
    return env


def holder(pgdata: Path, server_settings: dict[str, str] | None = None) -> subprocess.Popen[str]:
    extra = [json.dumps(server_settings)] if server_settings is not None else []
    return subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(pgdata), *extra],
        cwd=ROOT,
        env=_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def reports(procs: list[subprocess.Popen[str]], timeout: float = 120) -> list[dict[str, Any]]:
    """The JSON line of every holder, read concurrently (they start at the same time)."""
    sel = selectors.DefaultSelector()
    for i, proc in enumerate(procs):
        assert proc.stdout is not None
        sel.register(proc.stdout, selectors.EVENT_READ, i)
    found: dict[int, dict[str, Any]] = {}
    deadline = time.monotonic() + timeout
    while len(found) < len(procs):
        assert time.monotonic() < deadline, "a holder did not start in time"
        for key, _ in sel.select(timeout=1):
            line = key.fileobj.readline()  # type: ignore[union-attr]
            proc = procs[key.data]
            if not line:
                pytest.fail(f"holder exited {proc.wait()}: {proc.stderr.read()[-2000:]}")  # type: ignore[union-attr]
            found[key.data] = json.loads(line)
            sel.unregister(key.fileobj)
    return [found[i] for i in range(len(procs))]


def release(proc: subprocess.Popen[str]) -> int:
    assert proc.stdin is not None
    proc.stdin.close()
    return proc.wait(60)


def wait_gone(pid: int, timeout: float = 30) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
            return True
        time.sleep(0.1)
    return False


def handles(pgdata: Path) -> list[int]:
    path = pgdata / ".handle_pids.json"
    return json.loads(path.read_text()) if path.exists() else []


def test_concurrent_starts_on_a_fresh_directory_share_one_postmaster(pgdata):
    procs = [holder(pgdata) for _ in range(3)]
    try:
        found = reports(procs)
        assert {r["postmaster"] for r in found} == {found[0]["postmaster"]}
        assert all(r["one"] == 1 and r["vector"] == 1 for r in found)
        # One postmaster process for the directory (its children's titles don't name it).
        postmasters = [
            p.pid
            for p in psutil.process_iter(["name", "cmdline"])
            if p.info["name"] == "postgres" and str(pgdata) in " ".join(p.info["cmdline"] or [])
        ]
        assert postmasters == [found[0]["postmaster"]]
        assert sorted(handles(pgdata)) == sorted(p.pid for p in procs)
    finally:
        codes = [release(p) for p in procs]
    assert codes == [0, 0, 0]
    # The last clean exit stops the server.
    assert wait_gone(found[0]["postmaster"])
    assert not (pgdata / "postmaster.pid").exists()


def test_sigterm_of_a_holder_leaves_nothing_that_blocks_the_next_start(pgdata):
    first, second = holder(pgdata), holder(pgdata)
    postmaster = reports([first, second])[0]["postmaster"]
    first.send_signal(signal.SIGTERM)
    assert first.wait(30) == 128 + signal.SIGTERM
    # Its handle is released: the other holder keeps the server, alone.
    assert handles(pgdata) == [second.pid]
    assert psutil.pid_exists(postmaster)
    second.send_signal(signal.SIGTERM)
    second.wait(30)
    assert wait_gone(postmaster), "the last holder's SIGTERM did not stop the server"
    assert handles(pgdata) == []

    again = holder(pgdata)
    try:
        assert reports([again])[0]["one"] == 1
    finally:
        assert release(again) == 0


def test_a_killed_holder_is_pruned_and_db_stop_stops_the_stale_server(pgdata):
    doomed = holder(pgdata)
    postmaster = reports([doomed])[0]["postmaster"]
    doomed.kill()  # SIGKILL: no atexit, its pid stays in the handle list
    doomed.wait(30)
    assert handles(pgdata) == [doomed.pid]
    assert psutil.pid_exists(postmaster), "the server outlives a killed holder"

    # A new holder joins the running server and drops the dead pid.
    joiner = holder(pgdata)
    assert reports([joiner])[0]["postmaster"] == postmaster
    assert handles(pgdata) == [joiner.pid]
    joiner.kill()
    joiner.wait(30)

    stop = subprocess.run(
        [sys.executable, "-m", "legacymind.db.embedded", "stop", str(pgdata)],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert stop.returncode == 0, stop.stderr
    assert stop.stdout.strip() == "stopped"
    assert wait_gone(postmaster)
    assert handles(pgdata) == []

    again = subprocess.run(
        [sys.executable, "-m", "legacymind.db.embedded", "stop", str(pgdata)],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert again.stdout.strip() == "no server running"


def test_the_last_live_holder_stops_the_server_though_another_was_killed_before_it(pgdata):
    # runserver's autoreloader on SIGTERM: the parent SIGKILLs its serving child, then exits.
    doomed, survivor = holder(pgdata), holder(pgdata)
    postmaster = reports([doomed, survivor])[0]["postmaster"]
    doomed.kill()
    doomed.wait(30)
    assert sorted(handles(pgdata)) == sorted([doomed.pid, survivor.pid])
    assert release(survivor) == 0
    assert wait_gone(postmaster), "the server outlived its last live holder"
    assert handles(pgdata) == []


RUNSERVER_WAIT = 120


def test_sigterm_to_runserver_and_its_autoreloader_stops_the_embedded_server(pgdata):
    """``make run``'s server stopped with ``kill`` instead of Ctrl-C: the embedded server goes
    with it, nothing left for ``make db-stop``."""
    from tests.support.redis_server import free_port
    from tests.support.serving import wait_healthy

    port = free_port()
    env = {
        **_env(),
        "LEGACYMIND_PGDATA": str(pgdata),
        "DJANGO_SECRET_KEY": "test-only-secret",
        "AGENT_STATE_SECRET": "test-only-agent-secret",
        "EMBEDDING_PROVIDER": "hash",
        "DJANGO_DEBUG": "1",
    }
    for name in ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE"):
        env.pop(name, None)
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        url = f"http://127.0.0.1:{port}"  # an unmigrated database: /healthz says 503, but answers
        wait_healthy(url, server, timeout=RUNSERVER_WAIT, what="runserver", unhealthy_ok=True)
        assert len(handles(pgdata)) == 2  # the autoreloader and the process that serves
        postmaster = int((pgdata / "postmaster.pid").read_text().split()[0])
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(30)
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(30)
    assert wait_gone(postmaster), f"the server outlived runserver; handles {handles(pgdata)}"
    assert handles(pgdata) == []


def test_server_settings_apply_from_the_first_start_and_after_a_change(pgdata):
    # A fresh directory: the settings are in place before pgserver first starts postgres.
    first = holder(pgdata, {"shared_buffers": "48MB"})
    try:
        found = reports([first])[0]
    finally:
        assert release(first) == 0
    assert found["shared_buffers"] == "48MB"
    assert wait_gone(found["postmaster"])
    # The next start picks up a changed value; postgresql.conf includes our file once.
    again = holder(pgdata, {"shared_buffers": "40MB"})
    try:
        assert reports([again])[0]["shared_buffers"] == "40MB"
    finally:
        assert release(again) == 0
    conf = (pgdata / "postgresql.conf").read_text()
    assert conf.count("include_if_exists = 'legacymind.conf'") == 1
