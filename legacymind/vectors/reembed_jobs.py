"""Re-embeds as background jobs: :func:`reembed_job_start` queues the ``legacymind.rows_reembed``
task (the same :func:`legacymind.vectors.reembed.rows_reembed` that ``manage.py reembed``
runs) for the Celery worker and returns its id at once; :func:`reembed_job_status` reads what
the worker has reported since: queued, running with rows done of the total, done with the
run's summary, or failed with the error.

The job lives in Celery's result backend (Redis), under the task's id, for a day (Celery's
``result_expires``): the start records it as ``QUEUED`` before the task is sent, so an id
that was never started reads as unknown rather than as waiting.
Without ``REDIS_URL`` tasks run eagerly inside the caller's process and there is no worker
and no shared backend to follow a job in: a start is refused, with what to do instead.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import redis
from celery import states
from kombu.exceptions import OperationalError

from legacymind.celery import app
from legacymind.errors import NotFound, ServiceError, Unavailable
from legacymind.tasks import RUNNING, rows_reembed_task

QUEUED = "QUEUED"
# Celery's states as a caller reads them. PENDING is Celery's word for "no record": unknown.
_STATES = {
    QUEUED: "queued",
    states.RECEIVED: "queued",
    states.STARTED: "running",
    RUNNING: "running",
    states.RETRY: "running",
    states.SUCCESS: "done",
    states.FAILURE: "failed",
    states.REVOKED: "failed",
}
JOB_STATES = ("queued", "running", "done", "failed")

NO_WORKER = (
    "Background reembeds need a Celery worker, and REDIS_URL is not set: tasks run inside "
    "this process, with nowhere to follow a job. Run the reembed without background (with "
    "limit to do it in chunks), or `manage.py reembed`; or set REDIS_URL and start "
    "`celery -A legacymind worker`."
)


@dataclass(frozen=True)
class ReembedJob:
    id: str
    state: str  # one of JOB_STATES
    done: int | None = None  # rows re-embedded so far (the summary's rows once done)
    total: int | None = None  # rows the run will do, once it has counted them
    summary: dict[str, Any] | None = None  # ReembedSummary.as_dict(), once done
    error: str | None = None  # why it failed


def reembed_job_start(
    *, target: str, limit: int | None = None, dry_run: bool = False
) -> ReembedJob:
    """Queue a re-embed of ``target`` (thoughts, kg or all) for the worker; its id follows it.
    Raises ``ServiceError`` without a worker (no REDIS_URL), ``Unavailable`` when Redis does
    not answer."""
    if app.conf.task_always_eager:
        raise ServiceError(NO_WORKER, fields={"background": ["needs REDIS_URL and a worker"]})
    job_id = str(uuid.uuid4())
    try:
        # Recorded before the task is sent: the worker's first report then overwrites it.
        app.backend.store_result(job_id, {"done": 0, "total": None}, QUEUED)
        rows_reembed_task.apply_async(
            kwargs={"target": target, "limit": limit, "dry_run": dry_run}, task_id=job_id
        )
    except (OperationalError, redis.RedisError) as exc:
        raise Unavailable(f"Could not queue the reembed: Redis did not answer ({exc}).") from exc
    return ReembedJob(id=job_id, state="queued", done=0)


def reembed_job_status(*, job_id: str) -> ReembedJob:
    """What the worker has reported of job ``job_id``. Raises ``NotFound`` for an id no start
    returned (or one whose record has expired)."""
    if app.conf.task_always_eager:
        raise ServiceError(NO_WORKER, fields={"job_id": ["needs REDIS_URL and a worker"]})
    try:
        meta = app.backend.get_task_meta(job_id)
    except (OperationalError, redis.RedisError) as exc:
        raise Unavailable(f"Could not read the job: Redis did not answer ({exc}).") from exc
    state, info = meta.get("status"), meta.get("result")
    if state not in _STATES or not _is_reembed(state, info):
        raise NotFound(
            f"Unknown job id {job_id!r}: no reembed was started with it, or it finished more "
            "than a day ago.",
            fields={"job_id": ["unknown"]},
        )
    return _job(job_id, _STATES[state], info)


def _is_reembed(state: str, info: Any) -> bool:
    # Other tasks keep results too (legacymind.ping): their ids are not reembed jobs.
    if state == states.SUCCESS:
        return isinstance(info, dict) and "rows" in info and "tables" in info
    return state in (states.FAILURE, states.REVOKED) or isinstance(info, dict)


def _job(job_id: str, state: str, info: Any) -> ReembedJob:
    if state == "done":
        return ReembedJob(
            id=job_id,
            state=state,
            done=info["rows"],
            total=sum(t["selected"] for t in info["tables"].values()),
            summary=info,
        )
    if state == "failed":
        error = str(info) if info else "stopped (revoked, or its worker was lost)"
        return ReembedJob(id=job_id, state=state, error=error)
    progress = info if isinstance(info, dict) else {}
    return ReembedJob(
        id=job_id, state=state, done=progress.get("done"), total=progress.get("total")
    )
