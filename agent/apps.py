from __future__ import annotations

from django.apps import AppConfig


class AgentConfig(AppConfig):
    name = "agent"
    verbose_name = "Journaling agent"
