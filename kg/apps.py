from __future__ import annotations

from django.apps import AppConfig
from django.db.models.signals import post_migrate


class KgConfig(AppConfig):
    name = "kg"
    verbose_name = "Knowledge graph"

    def ready(self) -> None:
        from kg.permissions_setup import ensure_moderators_group, moderator_grant
        from legacymind.superuser import superuser_ensured

        # Sent after auth has created the permissions, so the group gets all of them.
        post_migrate.connect(ensure_moderators_group, sender=self, dispatch_uid="kg-moderators")
        # The operator's superuser moderates too.
        superuser_ensured.connect(moderator_grant, dispatch_uid="kg-superuser-moderates")
