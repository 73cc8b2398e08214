"""The write of a thought outside any transaction (as in a served request): the INSERT commits
by itself, with no BEGIN or COMMIT round trip around it, and a duplicate id is still a 409 that
leaves the connection usable. What the connection sends is read from libpq's own protocol trace
of the real connection."""

from __future__ import annotations

import pytest
from django.db import connection

from legacymind.errors import Conflict
from tests.support.pg_trace import another_connection, sent_sql
from tests.thoughts.factories import EntityFactory, ThoughtFactory
from thoughts.models import Thought
from thoughts.services import thought_create

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_think_request_sends_its_insert_with_no_begin_or_commit(api, tmp_path, settings):
    settings.KG_AUTO_EXTRACT = False  # its own transaction, after the think's
    from tests.thoughts.conftest import embedded, text_vector, with_cosine

    content = "Drip irrigation saves water in the garden"
    EntityFactory(name="Drip", **embedded(with_cosine(text_vector(content), 0.9, seed=1)))
    assert not connection.in_atomic_block
    with sent_sql(tmp_path / "trace.txt") as sent:
        r = api.post("/api/v1/think", {"content": content, "injection_scale": 3}, format="json")
    assert r.status_code == 201, r.content
    assert r.json()["delegated_result"]["memories_injected"] == 1
    inserts = [sql for sql in sent if sql.startswith('INSERT INTO "thoughts_thought"')]
    assert len(inserts) == 1
    assert not [sql for sql in sent if sql.strip().upper() in {"BEGIN", "COMMIT"}], sent
    # Committed by itself: another connection sees the row at once.
    stored_id = r.json()["delegated_result"]["thought_id"].removeprefix("thoughts:")
    with another_connection() as other:
        row = other.execute(
            "SELECT content FROM thoughts_thought WHERE id = %s", [stored_id]
        ).fetchone()
    assert row == (content,)


def test_a_duplicate_id_outside_a_transaction_is_a_409_and_the_connection_stays_usable(user):
    first = ThoughtFactory(owner=user, content="first")
    with pytest.raises(Conflict):
        thought_create(
            owner=user,
            content="second",
            origin="human",
            extract=False,
            id=first.id,
            mode="question",
        )
    assert not connection.in_atomic_block
    first.refresh_from_db()
    assert first.content == "first" and Thought.objects.count() == 1
    thought_create(owner=user, content="third", origin="human", extract=False, mode="question")
    assert Thought.objects.count() == 2
