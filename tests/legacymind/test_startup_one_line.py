"""Start-up failures the operator can fix are one line naming the variable, not a traceback
(F8), and the log prints each line once, scanners' Host headers as one WARNING (F12)."""

from __future__ import annotations

import pytest

from tests.support.settings_process import manage_process, settings_process


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
