"""Each batch of a re-embed commits without waiting for its WAL to be flushed (a crash loses at
most the last batches, which the next run redoes), in that batch's transaction only: the
connection keeps its setting afterwards, and a caller's own transaction is left as it was."""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from legacymind.vectors.reembed import rows_reembed
from thoughts.models import Thought

ASYNC = "SET LOCAL synchronous_commit = off"


def setting() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SHOW synchronous_commit")
        return str(cursor.fetchone()[0])


@pytest.mark.django_db(transaction=True)  # the batches' own transactions, as in production
def test_every_batch_commits_without_waiting_and_the_session_keeps_its_setting(user):
    Thought.objects.bulk_create(Thought(owner=user, content=f"thought {i}") for i in range(25))
    with CaptureQueriesContext(connection) as queries:
        summary = rows_reembed(target="thoughts", batch_size=10, index="keep")
    assert summary.rows == 25
    sets = [q["sql"] for q in queries.captured_queries if q["sql"] == ASYNC]
    assert len(sets) == 3  # one per batch: 10, 10, 5
    assert setting() == "on"
    assert Thought.objects.filter(embedding_dim__isnull=False).count() == 25


@pytest.mark.django_db
def test_inside_a_callers_transaction_nothing_is_changed(user):
    Thought.objects.create(owner=user, content="inside")
    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        assert rows_reembed(target="thoughts", index="keep").rows == 1
        assert setting() == "on"
    assert not [q for q in queries.captured_queries if q["sql"] == ASYNC]
