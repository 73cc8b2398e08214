from __future__ import annotations

from django.apps import AppConfig


class InnervoiceConfig(AppConfig):
    name = "innervoice"
    verbose_name = "Inner voice"
