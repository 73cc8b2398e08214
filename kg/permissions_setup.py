"""Keeps the "KG moderators" group and its permissions in place after every migrate.

Migration 0002 creates the group once; a database flush (``flush``, or the test runner between
transactional tests) deletes it while the post_migrate signal that follows recreates only
permissions and content types. Re-asserting the group on post_migrate makes it always exist.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from django.contrib.auth.models import User

MODERATORS_GROUP = "KG moderators"
MODERATOR_CODENAMES = [
    "moderate",
    *(
        f"{verb}_{model}"
        for model in ("entitycandidate", "edgecandidate", "observationcandidate")
        for verb in ("view", "change")
    ),
    *(
        f"{verb}_{model}"
        for model in ("entity", "edge", "observation", "blocklist")
        for verb in ("view", "add", "change", "delete")
    ),
]


def ensure_moderators_group(**_: Any) -> None:
    from django.contrib.auth.models import Group, Permission

    group, _created = Group.objects.get_or_create(name=MODERATORS_GROUP)
    perms = Permission.objects.filter(
        content_type__app_label="kg", codename__in=MODERATOR_CODENAMES
    )
    group.permissions.add(*perms)


def moderator_grant(*, user: User, **_: Any) -> None:
    """Make ``user`` a KG moderator (a member of the moderators group)."""
    from django.contrib.auth.models import Group

    ensure_moderators_group()
    user.groups.add(Group.objects.get(name=MODERATORS_GROUP))
