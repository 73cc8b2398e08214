"""``kg_extract`` on a real console stream: the extractor chain's log lines and the progress bar
share stderr, and a log line must never be glued to the bar's text."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.celery_worker import worker_database_url
from tests.thoughts.factories import ThoughtFactory

ROOT = Path(__file__).resolve().parents[2]
LOG_RECORD = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ INFO kg\.")


@pytest.mark.django_db(transaction=True)
def test_log_lines_are_written_between_progress_bar_updates():
    for i in range(3):  # committed: the command runs in another process
        ThoughtFactory(content=f"Ada Lovelace met Charles Babbage in London, visit {i}.")
    env = {
        **os.environ,
        "DATABASE_URL": worker_database_url(),
        "EMBEDDING_PROVIDER": "hash",
        "LOG_LEVEL": "info",
        "DJANGO_SECRET_KEY": "x",
    }
    env.pop("GROK_API_KEY", None)
    done = subprocess.run(
        [sys.executable, "manage.py", "kg_extract", "--dry-run"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Extracted 3 of 3 thought(s)" in done.stdout
    # The bar redraws with carriage returns; each piece between them is one write.
    pieces = [p for line in done.stderr.split("\n") for p in line.split("\r")]
    records = [p for p in pieces if LOG_RECORD.search(p)]
    assert records, done.stderr  # the chain logged at INFO, so the check below means something
    glued = [p for p in records if not LOG_RECORD.match(p)]
    assert glued == [], glued
    assert any(p.startswith("kg_extract: 100%") for p in pieces), done.stderr
