from django.db import migrations, models


def _norm(name):
    # kg.identity.norm, frozen here: a migration keeps the rule it was written with.
    return " ".join(name.split()).lower()


def rejected_observations_blocklisted(apps, schema_editor):
    """Rejected observation candidates were remembered by their rejected rows alone: their
    identities go on the blocklist, which staging now consults."""
    Blocklist = apps.get_model("kg", "Blocklist")
    ObservationCandidate = apps.get_model("kg", "ObservationCandidate")
    rows = ObservationCandidate.objects.filter(status="rejected").order_by("reviewed_at", "id")
    Blocklist.objects.bulk_create(
        [
            Blocklist(
                kind="observation",
                item=f"{_norm(entity_name)}|{_norm(name)}"[:600],
                reason=note,
                created_by_id=reviewer,
            )
            for name, entity_name, note, reviewer in rows.values_list(
                "name", "entity_name", "review_note", "reviewed_by_id"
            )
        ],
        ignore_conflicts=True,
    )


def observations_unlisted(apps, schema_editor):
    # The narrower column of before holds no observation kind.
    apps.get_model("kg", "Blocklist").objects.filter(kind="observation").delete()


class Migration(migrations.Migration):
    dependencies = [
        ("kg", "0012_observation_candidate"),
    ]

    operations = [
        migrations.AlterField(
            model_name="blocklist",
            name="kind",
            field=models.CharField(
                choices=[("entity", "Entity"), ("edge", "Edge"), ("observation", "Observation")],
                default="entity",
                max_length=16,
            ),
        ),
        migrations.RunPython(rejected_observations_blocklisted, observations_unlisted),
    ]
