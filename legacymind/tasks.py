"""Celery tasks of the shared infrastructure. They take plain values and call services."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from legacymind.vectors import reembed


@shared_task(name="legacymind.rows_reembed")
def rows_reembed_task(
    target: str = "all",
    batch_size: int = reembed.DEFAULT_BATCH_SIZE,
    limit: int | None = None,
    all_rows: bool = False,
    dry_run: bool = False,
    index: str = "auto",
) -> dict[str, Any]:
    """``manage.py reembed`` as background work; returns the summary as a dict."""
    summary = reembed.rows_reembed(
        target=target,
        batch_size=batch_size,
        limit=limit,
        all_rows=all_rows,
        dry_run=dry_run,
        index=index,
    )
    return summary.as_dict()
