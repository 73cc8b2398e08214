"""The Celery app. Without REDIS_URL tasks run eagerly in-process (see settings)."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "legacymind.settings")

app = Celery("legacymind")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.task(name="legacymind.ping")
def ping(value: str) -> str:
    """Round-trip probe used by the health check of the worker path."""
    return f"pong:{value}"
