"""Re-embeds as background jobs: :func:`reembed_job_start` queues the ``legacymind.rows_reembed``
task (the same :func:`legacymind.vectors.reembed.rows_reembed` that ``manage.py reembed``
runs) for the Celery worker and returns its id at once; :func:`reembed_job_status` reads what
the worker has reported since: queued, running with rows done of the total, done with the
run's summary, or failed with the error. :func:`reembed_job_cancel` stops one: a queued job
never runs; a running one stops after the batch it is writing (every batch written stays), and
reads as cancelled with its rows done of the total and its summary so far.

Cancelling is cooperative: the cancel sets a flag in Redis that the task reads before it starts
and after every batch (:func:`reembed_job_run`, the task's body). A queued job is also revoked,
so a worker that hears the broadcast drops it unrun; a worker that was not listening finds the
flag instead. Nothing is killed mid-batch: a batch is one transaction, and an index taken out
is built again before the run ends.

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
from celery import Task, states
from celery.exceptions import Ignore
from kombu.exceptions import OperationalError

from legacymind.celery import app
from legacymind.errors import Conflict, NotFound, ServiceError, Unavailable
from legacymind.vectors import reembed

QUEUED = "QUEUED"
# The state a re-embed reports while it runs, with meta {"done": rows, "total": rows}
# (total is None while the run is still counting what it will do).
RUNNING = "PROGRESS"
# A run stopped by a cancel, with meta {"done", "total", "summary"}.
CANCELLED = "CANCELLED"
_CANCEL_KEY = "legacymind-reembed-cancel-{}"
# Celery's states as a caller reads them. PENDING is Celery's word for "no record": unknown.
_STATES = {
    QUEUED: "queued",
    states.RECEIVED: "queued",
    states.STARTED: "running",
    RUNNING: "running",
    states.RETRY: "running",
    states.SUCCESS: "done",
    states.FAILURE: "failed",
    CANCELLED: "cancelled",
    # A worker that heard the revoke of a queued job (or an operator's `celery revoke`).
    states.REVOKED: "cancelled",
}
# cancelling: running, and asked to stop after its current batch.
JOB_STATES = ("queued", "running", "cancelling", "done", "failed", "cancelled")
ENDED = ("done", "failed", "cancelled")

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
    summary: dict[str, Any] | None = None  # ReembedSummary.as_dict(), once done or cancelled
    error: str | None = None  # why it failed


def reembed_job_start(
    *, target: str, limit: int | None = None, dry_run: bool = False
) -> ReembedJob:
    """Queue a re-embed of ``target`` (thoughts, kg or all) for the worker; its id follows it.
    Raises ``ServiceError`` without a worker (no REDIS_URL), ``Unavailable`` when Redis does
    not answer."""
    if app.conf.task_always_eager:
        raise ServiceError(NO_WORKER, fields={"background": ["needs REDIS_URL and a worker"]})
    from legacymind.tasks import rows_reembed_task  # the task module imports this one

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
        state, info = meta.get("status"), meta.get("result")
        if state not in _STATES or not _is_reembed(state, info):
            raise NotFound(
                f"Unknown job id {job_id!r}: no reembed was started with it, or it finished "
                "more than a day ago.",
                fields={"job_id": ["unknown"]},
            )
        job = _job(job_id, _STATES[state], info)
        if job.state in ("queued", "running") and _cancel_asked(job_id):
            # Queued: it will never run. Running: it stops after the batch it is writing.
            state = "cancelled" if job.state == "queued" else "cancelling"
            job = ReembedJob(id=job_id, state=state, done=job.done, total=job.total)
    except (OperationalError, redis.RedisError) as exc:
        raise Unavailable(f"Could not read the job: Redis did not answer ({exc}).") from exc
    return job


def reembed_job_cancel(*, job_id: str) -> ReembedJob:
    """Cancel job ``job_id``: a queued job never runs (it reads as cancelled at once); a
    running one stops after the batch it is writing, keeping the rows done (cancelling until
    then, cancelled after). Raises ``NotFound`` for an unknown id and ``Conflict``, changing
    nothing, for a job that has already ended."""
    job = reembed_job_status(job_id=job_id)
    if job.state in ENDED:
        counted = job.done is not None and job.total is not None
        rows = f", {job.done} of {job.total} rows" if counted else ""
        raise Conflict(
            f"Job {job_id!r} has already ended ({job.state}{rows}): there is nothing to "
            "cancel, and it is left as it was.",
            fields={"job_id": [f"already {job.state}"]},
        )
    try:
        app.backend.client.set(_CANCEL_KEY.format(job_id), 1, ex=_KEPT_SECONDS)
        if job.state == "queued":
            app.control.revoke(job_id)
    except (OperationalError, redis.RedisError) as exc:
        raise Unavailable(f"Could not cancel the job: Redis did not answer ({exc}).") from exc
    return reembed_job_status(job_id=job_id)


# As long as Celery keeps the job's record (result_expires, a day by default).
_KEPT_SECONDS = 24 * 3600


def _cancel_asked(job_id: str) -> bool:
    return bool(app.backend.client.exists(_CANCEL_KEY.format(job_id)))


def reembed_job_run(task: Task, **options: Any) -> dict[str, Any]:
    """The ``legacymind.rows_reembed`` task's body: :func:`reembed.rows_reembed` with
    ``options``, reporting its progress as the ``PROGRESS`` state after every batch and
    stopping at a batch boundary once the job is cancelled. Returns the summary as a dict; a
    cancelled run records ``CANCELLED`` itself and raises ``Ignore`` (no result over it)."""
    job_id = task.request.id
    # A job has a record to report to and a flag to read only when a worker runs it (not when
    # the task is called as a plain function, or applied eagerly).
    followed = job_id is not None and not task.request.is_eager

    def progress(done: int, total: int | None) -> None:
        if job_id is not None:
            task.update_state(state=RUNNING, meta={"done": done, "total": total})

    def stop() -> bool:
        return followed and _cancel_asked(job_id)

    if stop():
        task.update_state(state=CANCELLED, meta={"done": 0, "total": None, "summary": None})
        raise Ignore()
    progress(0, None)
    summary = reembed.rows_reembed(**options, progress=progress, stop=stop)
    if summary.stopped:
        total = sum(t.selected for t in summary.tables.values())
        meta = {"done": summary.rows, "total": total, "summary": summary.as_dict()}
        task.update_state(state=CANCELLED, meta=meta)
        raise Ignore()
    return summary.as_dict()


def _is_reembed(state: str, info: Any) -> bool:
    # Other tasks keep results too (legacymind.ping): their ids are not reembed jobs.
    if state == states.SUCCESS:
        return isinstance(info, dict) and "rows" in info and "tables" in info
    return state in (states.FAILURE, states.REVOKED) or isinstance(info, dict)


def _job(job_id: str, state: str, info: Any) -> ReembedJob:
    if state == "cancelled":
        # Recorded by the run (rows done, summary), or by a worker that dropped it unrun.
        meta = info if isinstance(info, dict) else {}
        return ReembedJob(
            id=job_id,
            state=state,
            done=meta.get("done"),
            total=meta.get("total"),
            summary=meta.get("summary"),
        )
    if state == "done":
        return ReembedJob(
            id=job_id,
            state=state,
            done=info["rows"],
            total=sum(t["selected"] for t in info["tables"].values()),
            summary=info,
        )
    if state == "failed":
        error = str(info) if info else "stopped (its worker was lost)"
        return ReembedJob(id=job_id, state=state, error=error)
    progress = info if isinstance(info, dict) else {}
    return ReembedJob(
        id=job_id, state=state, done=progress.get("done"), total=progress.get("total")
    )
