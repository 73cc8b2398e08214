"""``migrate`` makes the database cache's table: a deployment that runs only ``migrate``
(docker-compose's web service) has sign-in and the journaling agent working without Redis."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import connection

pytestmark = pytest.mark.django_db(transaction=True)


def table_exists() -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT to_regclass('legacymind_cache') IS NOT NULL")
        return bool(cursor.fetchone()[0])


def test_migrating_the_legacymind_app_makes_the_cache_table_again():
    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE legacymind_cache")
    try:
        call_command("migrate", "legacymind", "0002", verbosity=0)
        assert not table_exists()
        call_command("migrate", "legacymind", verbosity=0)  # 0003 runs createcachetable
        assert table_exists()
    finally:
        call_command("createcachetable", verbosity=0)
