"""``manage.py reembed`` with INFO logging on: the index build's log line is written above the
progress bar, on a line of its own, not glued to the end of the bar's line (a real process,
its stderr read as a terminal would show it)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from legacymind.vectors.indexes import vector_index
from tests.support.celery_worker import worker_database_url
from thoughts.models import Thought

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]
STAMP = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} INFO ")


def test_log_lines_go_out_above_the_progress_bar(user):
    index = vector_index(Thought, 384)
    assert index is not None
    Thought.objects.bulk_create(
        Thought(owner=user, content=f"logged thought {i}") for i in range(300)
    )
    env = {
        **os.environ,
        "DATABASE_URL": worker_database_url(),
        "EMBEDDING_PROVIDER": "hash",
        "EMBEDDING_DIM": "384",
        "DJANGO_SECRET_KEY": "x",
        "LOG_LEVEL": "info",
    }
    done = subprocess.run(
        [sys.executable, "manage.py", "reembed", "--target", "thoughts", "--index", "rebuild",
         "--batch-size", "50"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    logged = [line for line in done.stderr.split("\n") if STAMP.search(line)]
    assert any(f"vector_index.build index={index.name}" in line for line in logged), done.stderr
    for line in logged:
        # What a terminal shows of the line: the text after its last carriage return.
        shown = line.rsplit("\r", 1)[-1]
        assert STAMP.match(shown), repr(line)
    assert "reembed: 100%" in done.stderr
