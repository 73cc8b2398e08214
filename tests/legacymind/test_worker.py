"""The worker path: a real Celery worker process and a real Redis answer ``legacymind.ping``."""

from __future__ import annotations

import pytest

from legacymind.celery import app
from tests.support.celery_worker import worker_and_redis


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_ping_round_trips_through_a_real_worker_and_redis():
    with worker_and_redis() as worker:
        result = app.send_task("legacymind.ping", args=["ops-check"])
        try:
            answer = result.get(timeout=60)
        except Exception:
            worker.terminate()
            stderr = worker.stderr.read().decode()[-2000:]  # type: ignore[union-attr]
            pytest.fail(f"no answer from the worker: {stderr}")
        assert answer == "pong:ops-check"
        assert result.successful()
        # The answer came from another process: nothing ran eagerly in this one.
        assert app.conf.task_always_eager is False
    assert worker.returncode is not None
