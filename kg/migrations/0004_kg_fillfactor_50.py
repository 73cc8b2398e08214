"""Half of each page of the vector-bearing KG tables left free, for HOT access bumps.

0003 left 25%: three 1.7 KB rows to a page with room for one new version. Memories that are
used together were usually created together (one extraction, one load) and sit on the same
pages, so one batched bump (``thoughts.think.touches``) updates two or three rows of a page at
once and all but one left the page: ~10% of bumps at 100k entities were non-HOT, each an HNSW
insertion. With 50% (two rows a page, room for two to three versions) every bump in the same
run was HOT, and the database's CPU per think under load fell from 16.7 to 11.8 ms (62 -> 75
requests/s, docs/benchmarks.md "Think"), for a heap ~1.5x larger (268 -> 391 MB at 100k).
Existing pages keep their layout until the table is rewritten (VACUUM FULL).
"""

from __future__ import annotations

from django.db import migrations

TABLES = ("kg_entity", "kg_observation")


class Migration(migrations.Migration):
    dependencies = [("kg", "0003_kg_fillfactor")]

    operations = [
        migrations.RunSQL(
            sql=[f"ALTER TABLE {t} SET (fillfactor = 50)" for t in TABLES],
            reverse_sql=[f"ALTER TABLE {t} SET (fillfactor = 75)" for t in TABLES],
        )
    ]
