"""Celery tasks of the shared infrastructure. They take plain values and call services."""

from __future__ import annotations

from typing import Any

from celery import Task, shared_task

from legacymind.vectors import reembed, reembed_jobs


# Its result is kept (CELERY_TASK_IGNORE_RESULT is on for every other task): a background
# job's caller reads the progress and the summary from the result backend by the job's id.
@shared_task(name="legacymind.rows_reembed", bind=True, ignore_result=False)
def rows_reembed_task(
    self: Task,
    target: str = "all",
    batch_size: int = reembed.DEFAULT_BATCH_SIZE,
    limit: int | None = None,
    all_rows: bool = False,
    dry_run: bool = False,
    index: str = "auto",
) -> dict[str, Any]:
    """``manage.py reembed`` as background work; returns the summary as a dict, reports its
    progress after every batch, and stops at a batch boundary when the job is cancelled
    (see ``legacymind.vectors.reembed_jobs``)."""
    return reembed_jobs.reembed_job_run(
        self,
        target=target,
        batch_size=batch_size,
        limit=limit,
        all_rows=all_rows,
        dry_run=dry_run,
        index=index,
    )
