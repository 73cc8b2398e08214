"""The embedded server's pgvector and the version check of migration legacymind 0002."""

from __future__ import annotations

import importlib
from collections.abc import Iterator

import pytest
from django.db import connection

migration = importlib.import_module("legacymind.migrations.0002_vector_extension_update")


@pytest.mark.django_db
def test_the_extension_catalog_is_the_installed_library_version_and_at_least_0_8():
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT e.extversion, a.default_version FROM pg_extension e "
            "JOIN pg_available_extensions a ON a.name = e.extname WHERE e.extname = 'vector'"
        )
        installed, available = cursor.fetchone()
    assert installed == available
    assert tuple(int(p) for p in installed.split(".")[:2]) >= (0, 8)


@pytest.mark.parametrize("version", ["0.7.0", "0.8.0", "0.8.5", "1.0.0"])
def test_the_check_accepts_pgvector_with_halfvec(version):
    migration.check_version(version)


@pytest.mark.parametrize("version", ["0.5.1", "0.6.2"])
def test_the_check_refuses_an_older_pgvector_naming_both_versions(version):
    with pytest.raises(RuntimeError, match=rf"pgvector {version} is installed.*>= 0\.7"):
        migration.check_version(version)


@pytest.mark.django_db
def test_a_current_extension_is_not_altered_so_a_role_that_does_not_own_it_migrates():
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries, connection.schema_editor() as editor:
        migration.update_and_check(None, editor)

    assert not any("ALTER EXTENSION" in q["sql"] for q in queries.captured_queries)


@pytest.fixture
def not_extension_owner() -> Iterator[None]:
    role = f"lm_not_ext_owner_{connection.settings_dict['NAME']}"
    with connection.cursor() as cursor:
        cursor.execute(f"DROP ROLE IF EXISTS {role}")
        cursor.execute(f"CREATE ROLE {role}")
        cursor.execute(f"SET ROLE {role}")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET ROLE")
            cursor.execute(f"DROP ROLE {role}")


@pytest.mark.django_db
def test_a_refused_update_leaves_the_migration_transaction_usable(not_extension_owner):
    with connection.cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        before = cursor.fetchone()[0]

    migration.update(connection)  # Postgres refuses it: not the extension's owner

    with connection.cursor() as cursor:  # "current transaction is aborted" without the savepoint
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        assert cursor.fetchone()[0] == before
