"""The embedded server's pgvector and the version check of migration legacymind 0002."""

from __future__ import annotations

import importlib

import pytest
from django.db import connection

from tests.support.roles import acting_as

migration = importlib.import_module("legacymind.migrations.0002_vector_extension_update")


@pytest.mark.django_db
def test_the_extension_catalog_is_the_installed_library_version_and_at_least_0_8():
    with connection.cursor() as cursor:
        installed, available = migration.versions(cursor)
    assert installed == available
    assert migration.major_minor(installed) >= (0, 8)


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


@pytest.mark.django_db
def test_a_refused_update_leaves_the_migration_transaction_usable():
    with connection.cursor() as cursor:
        before = migration.versions(cursor)

    with acting_as("lm_not_ext_owner"):
        migration.update(connection)  # Postgres refuses it: not the extension's owner
        # "current transaction is aborted" here without the savepoint
        with connection.cursor() as cursor:
            assert migration.versions(cursor) == before
