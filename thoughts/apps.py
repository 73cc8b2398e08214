from __future__ import annotations

from django.apps import AppConfig


class ThoughtsConfig(AppConfig):
    name = "thoughts"
    verbose_name = "Thoughts"
