from __future__ import annotations

from django.apps import AppConfig


class KgConfig(AppConfig):
    name = "kg"
    verbose_name = "Knowledge graph"
