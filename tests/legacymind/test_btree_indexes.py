"""The embedded tables' btree indexes: one plain index on ``embedding_model`` (no LIKE copy),
and no single-column owner index beside ``thought_owner_idx``. Every index is an entry written
by each insert and by each reembed update (the model column changes, so the update is never
HOT), so none is kept that no query uses."""

from __future__ import annotations

import pytest
from django.db import connection

from thoughts.models import Thought

pytestmark = pytest.mark.django_db

TABLES = ("thoughts_thought", "kg_entity", "kg_observation")


def _indexes(table: str) -> dict[str, str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s", [table])
        return dict(cursor.fetchall())


@pytest.mark.parametrize("table", TABLES)
def test_embedding_model_has_one_plain_btree_and_no_like_index(table):
    indexes = _indexes(table)
    on_model = [d for d in indexes.values() if "(embedding_model" in d]
    assert len(on_model) == 1, on_model
    assert "USING btree (embedding_model)" in on_model[0]
    assert not [d for d in indexes.values() if "pattern_ops" in d]


def test_thoughts_have_no_owner_index_beside_the_owner_and_created_at_one():
    indexes = _indexes("thoughts_thought")
    owner_leading = [name for name, d in indexes.items() if "btree (owner_id" in d]
    assert owner_leading == ["thought_owner_idx"]


def test_an_owners_thoughts_are_read_through_thought_owner_idx(user):
    Thought.objects.bulk_create(Thought(owner=user, content=f"t{i}") for i in range(50))
    query = Thought.objects.filter(owner=user).order_by("-created_at")[:20]
    sql, params = query.query.sql_with_params()
    with connection.cursor() as cursor:
        # A table this small is cheaper to scan; the question is which index serves the owner.
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(f"EXPLAIN {sql}", params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "thought_owner_idx" in plan, plan


def test_a_filter_on_the_embedding_model_is_read_through_its_index():
    # Unordered: with the model's default order (-created_at) an empty table's created_at
    # index costs the same as thought_model_idx, and the planner took either (a clean-clone run
    # failed on it). The question is which index serves the filter.
    query = Thought.objects.filter(embedding_model="m").order_by()
    sql, params = query.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(f"EXPLAIN {sql}", params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "thought_model_idx" in plan, plan
