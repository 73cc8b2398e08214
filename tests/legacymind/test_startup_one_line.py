"""Start-up failures the operator can fix are one line naming the variable, not a traceback
(F8), and the log prints each line once, scanners' Host headers as one WARNING (F12)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from tests.support.celery_worker import worker_database_url
from tests.support.redis_server import free_port
from tests.support.settings_process import ROOT, manage_process, settings_process


def _one_line(done, *expected: str) -> str:
    assert done.returncode != 0
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert all(text in lines[0] for text in expected), lines[0]
    return lines[0]


def test_an_unusable_pgdata_directory_is_one_line_naming_legacymind_pgdata(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")

    done = manage_process("check", DATABASE_URL=None, LEGACYMIND_PGDATA=str(blocker / "pgdata"))

    _one_line(done, "Configuration error: LEGACYMIND_PGDATA=", "cannot be used")


@pytest.mark.parametrize(
    ("name", "value", "minimum"),
    [
        ("PG_SHARED_BUFFERS", "0MB", "128kB"),
        ("PG_SHARED_BUFFERS", "120kB", "128kB"),
        ("PG_MAINTENANCE_WORK_MEM", "512kB", "1MB"),
    ],
)
def test_a_postgres_size_below_the_servers_minimum_is_refused_naming_it(name, value, minimum):
    done = manage_process("check", **{name: value})

    _one_line(done, f"{name}={value} is below Postgres' minimum of {minimum}")


def test_the_smallest_shared_buffers_postgres_takes_passes_the_settings():
    done = settings_process(
        "import django; django.setup(); from django.conf import settings as s; "
        "print(s.PG_SHARED_BUFFERS)",
        PG_SHARED_BUFFERS="128kB",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "128kB"


def test_embedding_dim_with_the_local_model_is_refused_at_start_up():
    done = manage_process("check", EMBEDDING_PROVIDER="local", EMBEDDING_DIM="256")

    _one_line(done, "EMBEDDING_DIM=256 but the local model is 384-d")
    ok = manage_process("check", EMBEDDING_PROVIDER="local", EMBEDDING_DIM="384")
    assert "EMBEDDING_DIM" not in ok.stderr


# --- an unreachable database ------------------------------------------------------------------
# Nothing listens on port 1; the password must never reach the message.
UNREACHABLE = "postgres://lm:pw-never-shown@127.0.0.1:1/lm"
UNREACHABLE_LINE = ("Database unreachable: DATABASE_URL at 127.0.0.1:1 (database lm)", "refused")


@pytest.mark.parametrize("command", [["migrate", "--noinput"], ["ensure_superuser"]])
def test_an_unreachable_database_is_one_line_naming_database_url_and_its_address(command):
    done = manage_process(*command, DATABASE_URL=UNREACHABLE)

    _one_line(done, *UNREACHABLE_LINE)
    assert "pw-never-shown" not in done.stderr + done.stdout


def test_runserver_as_make_run_starts_it_exits_on_an_unreachable_database_in_one_line():
    # With the autoreloader the migration check runs in a thread of a child process: the
    # traceback went to stderr and the server stayed up, waiting for a file to change.
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", f"127.0.0.1:{free_port()}"],
        cwd=ROOT,
        env={
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": os.environ.get("HOME", "/tmp"),
            "DJANGO_DEBUG": "1",
            "EMBEDDING_PROVIDER": "hash",
            "DATABASE_URL": UNREACHABLE,
        },
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # the autoreloader's child goes with it below
    )
    try:
        stdout, stderr = server.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        stdout, stderr = server.communicate()
        pytest.fail(f"runserver still running after 60 s; stderr: {stderr[-2000:]}")
    done = subprocess.CompletedProcess(server.args, server.returncode, stdout, stderr)

    _one_line(done, *UNREACHABLE_LINE)


@pytest.mark.django_db
def test_a_query_that_fails_on_an_open_connection_keeps_its_traceback():
    failing_query = (
        "from django.db import connection; c = connection.cursor(); "
        "c.execute('SET statement_timeout = 1'); c.execute('SELECT pg_sleep(1)')"
    )
    done = manage_process("shell", "-c", failing_query, DATABASE_URL=worker_database_url())

    assert done.returncode != 0
    assert "Traceback" in done.stderr
    assert "canceling statement due to statement timeout" in done.stderr
    assert "Database unreachable" not in done.stderr


# --- logging ---------------------------------------------------------------------------------
LOG_SNIPPET = """
import logging, django
django.setup()
from django.test import Client
logging.getLogger("django.request").warning("probe-warning")
logging.getLogger("django.db.backends").info("probe-info")
Client(HTTP_HOST="evil.example").get("/healthz")
"""


@pytest.mark.parametrize("debug", ["1", "0"])
def test_each_django_log_line_is_printed_once(debug):
    done = settings_process(LOG_SNIPPET, DJANGO_DEBUG=debug, EMBEDDING_PROVIDER="hash")

    assert done.returncode == 0, done.stderr
    assert done.stderr.count("probe-warning") == 1, done.stderr
    assert done.stderr.count("probe-info") == (1 if debug == "1" else 0), done.stderr


def test_a_foreign_host_header_is_one_warning_line_without_traceback():
    done = settings_process(LOG_SNIPPET, EMBEDDING_PROVIDER="hash")

    assert done.returncode == 0, done.stderr
    host_lines = [line for line in done.stderr.splitlines() if "evil.example" in line]
    assert len(host_lines) == 1, done.stderr
    assert " WARNING django.security.DisallowedHost Invalid HTTP_HOST header" in host_lines[0]
    assert "Traceback" not in done.stderr
    assert "ERROR" not in done.stderr
