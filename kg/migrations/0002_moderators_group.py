"""The "KG moderators" group: holds the moderate permission and the rights the admin needs."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

GROUP = "KG moderators"
CODENAMES = [
    "moderate",
    "view_entitycandidate", "change_entitycandidate",
    "view_edgecandidate", "change_edgecandidate",
    "view_entity", "add_entity", "change_entity", "delete_entity",
    "view_edge", "add_edge", "change_edge", "delete_edge",
    "view_observation", "add_observation", "change_observation", "delete_observation",
    "view_blocklist", "add_blocklist", "change_blocklist", "delete_blocklist",
]


def create_group(apps, schema_editor):
    # Permissions are normally created after all migrations; make them exist now.
    for config in apps.get_app_configs():
        config.models_module = True
        create_permissions(config, apps=apps, verbosity=0)
        config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.get_or_create(name=GROUP)
    perms = Permission.objects.filter(content_type__app_label="kg", codename__in=CODENAMES)
    group.permissions.add(*perms)


def remove_group(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name=GROUP).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("kg", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]
    operations = [migrations.RunPython(create_group, remove_group)]
