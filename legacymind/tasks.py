"""Celery tasks of the shared infrastructure. They take plain values and call services."""

from __future__ import annotations

from typing import Any

from celery import Task, shared_task

from legacymind.vectors import reembed

# The state a re-embed reports while it runs, with meta {"done": rows, "total": rows}
# (total is None while the run is still counting what it will do).
RUNNING = "PROGRESS"


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
    """``manage.py reembed`` as background work; returns the summary as a dict, and reports
    its progress as the ``PROGRESS`` state after every batch."""

    def progress(done: int, total: int | None) -> None:
        if self.request.id is not None:  # None when called as a plain function
            self.update_state(state=RUNNING, meta={"done": done, "total": total})

    progress(0, None)
    summary = reembed.rows_reembed(
        target=target,
        batch_size=batch_size,
        limit=limit,
        all_rows=all_rows,
        dry_run=dry_run,
        index=index,
        progress=progress,
    )
    return summary.as_dict()
