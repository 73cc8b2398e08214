"""The database cache's table (CACHES, when REDIS_URL is unset), made by ``migrate``.

Sign-in's failure counter, throttles and the journaling agent's guards use the cache: a
deployment that ran only ``migrate`` (as docker-compose's web service does) answered them with
a 500 for a missing ``legacymind_cache`` table. ``createcachetable`` makes only what is missing
and nothing for a Redis cache, so this is safe to run on any database, any number of times."""

from __future__ import annotations

from typing import Any

from django.core.management import call_command
from django.db import migrations


def cache_table(apps: Any, schema_editor: Any) -> None:
    call_command("createcachetable", database=schema_editor.connection.alias, verbosity=0)


class Migration(migrations.Migration):
    dependencies = [("legacymind", "0002_vector_extension_update")]

    operations = [migrations.RunPython(cache_table, migrations.RunPython.noop, elidable=False)]
