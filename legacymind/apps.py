from __future__ import annotations

from django.apps import AppConfig


class LegacymindConfig(AppConfig):
    name = "legacymind"
    verbose_name = "LegacyMind"
