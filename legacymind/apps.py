from __future__ import annotations

from django.apps import AppConfig


class LegacymindConfig(AppConfig):
    name = "legacymind"
    verbose_name = "LegacyMind"

    def ready(self) -> None:
        from django.contrib import admin

        from legacymind.web import login_guard  # connects the failed sign-in counter

        # The admin's login says when the sign-in guard has locked the pair, as ours does.
        admin.site.login_form = login_guard.AdminSignInForm
