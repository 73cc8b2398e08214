"""Ctrl-C during ``manage.py reembed`` (F9): a real process sent SIGINT mid-run prints what it
did and how to continue, exits 130 without a traceback, builds the index it took out again,
and the next run finishes the rest."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection

from legacymind.vectors.indexes import index_repair, vector_index
from tests.support.celery_worker import worker_database_url
from thoughts.models import Thought

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]
ROWS = 4000


def _index_exists(name: str) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_indexes WHERE indexname = %s", [name])
        return cursor.fetchone() is not None


def _embedded() -> int:
    return Thought.objects.filter(embedding_provider="hash", embedding_dim=384).count()


def test_ctrl_c_prints_a_partial_summary_exits_130_and_a_second_run_continues(user, settings):
    settings.EMBEDDING_PROVIDER, settings.EMBEDDING_DIM = "hash", 384
    index = vector_index(Thought, 384)
    assert index is not None and _index_exists(index.name)
    Thought.objects.bulk_create(
        Thought(owner=user, content=f"interrupted thought {i}") for i in range(ROWS)
    )
    env = {
        **os.environ,
        "DATABASE_URL": worker_database_url(),
        "EMBEDDING_PROVIDER": "hash",
        "EMBEDDING_DIM": "384",
        "DJANGO_SECRET_KEY": "x",
    }
    command = [sys.executable, "manage.py", "reembed", "--target", "thoughts"]
    process = subprocess.Popen(
        [*command, "--batch-size", "2", "--index", "rebuild"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while _embedded() < 20:  # well into the run, far from its end
            assert process.poll() is None and time.monotonic() < deadline, process.communicate()
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
            index_repair(tables=[Thought], dims=(384,))

    assert process.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert "interrupted: run the same command again to continue" in err
    assert "Interrupted: re-embedded " in out and "rows/s)" in out, out
    done = _embedded()
    assert 0 < done < ROWS
    assert f"thoughts: {done} embedded" in out, out
    assert f"{index.name}: building it again" in err
    assert _index_exists(index.name)

    call_command("reembed", "--target", "thoughts", stdout=StringIO(), stderr=StringIO())
    assert _embedded() == ROWS
