"""The re-embed batch write checks each row in its UPDATE, on the row's latest version: a row
whose text changed, or that another run has re-embedded meanwhile, is left as it is, and
nothing is locked before the write."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from django.db import connection, connections, transaction

from kg.models import Entity, Observation
from legacymind.providers.embeddings import HashEmbedder
from legacymind.vectors.reembed import rows_reembed
from legacymind.vectors.writes import RowGuard, text_digest, vectors_store
from tests.kg.factories import EntityFactory
from tests.support.openai_server import use_openai_embeddings

HASH4 = HashEmbedder(dim=4)
MODEL = "text-embedding-3-small"


def _store(rows, digests):
    with transaction.atomic():
        return vectors_store(
            model=Observation,
            pks=[row.pk for row in rows],
            matrix=HASH4.embed([row.embedding_text() for row in rows]),
            provider="hash",
            model_name="hash-4",
            embedded_at=rows[0].created_at,
            guard=RowGuard(columns=("name", "description"), digests=digests),
        )


@pytest.mark.django_db
def test_the_digest_of_any_text_matches_the_one_the_update_computes():
    rows = [
        Observation.objects.create(name="Zürich ☃ — ünïcode", description="naïve café 🚀"),
        Observation.objects.create(name="Backups", description=""),
        Observation.objects.create(name="tab\tand\nnewline", description="'quotes' \\ %s"),
    ]

    written = _store(rows, [text_digest([r.name, r.description]) for r in rows])

    assert written == 3
    assert all(r.embedding_model == "hash-4" for r in Observation.objects.all())


@pytest.mark.django_db
def test_a_row_whose_digest_differs_is_not_written_and_the_others_are():
    rows = [Observation.objects.create(name=f"note {i}", description="d") for i in range(3)]
    digests = [text_digest([r.name, r.description]) for r in rows]
    digests[1] = text_digest(["an older name", "d"])

    assert _store(rows, digests) == 2
    assert Observation.objects.get(pk=rows[1].pk).embedding is None
    assert Observation.objects.get(pk=rows[0].pk).embedding_model == "hash-4"


@pytest.mark.django_db
def test_a_guard_needs_one_digest_per_row():
    rows = [Observation.objects.create(name="a"), Observation.objects.create(name="b")]

    with pytest.raises(ValueError, match="2 rows but 1 digests"):
        _store(rows, [text_digest(["a", ""])])
    assert not Observation.objects.filter(embedding__isnull=False).exists()


@pytest.mark.django_db(transaction=True)
def test_a_row_another_run_embedded_meanwhile_is_not_written_again(settings, openai_stub):
    entity = EntityFactory(name="Postgres", entity_type="technology")
    stub = use_openai_embeddings(settings, openai_stub)
    theirs = [1.0, 0.0, 0.0, 0.0]  # no hash vector of a text is this one

    def embed_while_another_run_writes(texts):
        # The other run writes the current model's vector after this batch was read.
        Entity.objects.filter(pk=entity.pk).update(
            embedding=theirs, embedding_provider="openai", embedding_model=MODEL, embedding_dim=4
        )
        connection.close()  # this runs in the stub's thread, on its own connection
        return HASH4.embed(texts).tolist()

    stub.embed_fn = embed_while_another_run_writes

    assert rows_reembed(target="kg").rows == 0
    assert np.allclose(Entity.objects.get(pk=entity.pk).embedding, theirs)


@pytest.mark.django_db(transaction=True)
def test_an_edit_committed_while_the_write_waits_for_the_row_is_not_overwritten(
    settings, openai_stub
):
    """The write does not lock rows beforehand: it waits for an editor's open transaction on
    the row, then checks the committed version, whose text is no longer the one embedded."""
    entity = EntityFactory(name="Postgres", entity_type="technology")
    stub = use_openai_embeddings(settings, openai_stub)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        writer_pid = cursor.fetchone()[0]
    locked, waited = threading.Event(), threading.Event()

    def editor():
        try:
            with transaction.atomic():
                Entity.objects.filter(pk=entity.pk).update(name="PostgreSQL")
                locked.set()
                with connection.cursor() as cursor:
                    for _ in range(200):  # until the re-embed's UPDATE waits for this row
                        cursor.execute(
                            "SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s",
                            [writer_pid],
                        )
                        if cursor.fetchone()[0] == "Lock":
                            waited.set()
                            break
                        time.sleep(0.05)
        finally:
            locked.set()
            connections.close_all()

    thread = threading.Thread(target=editor)

    def embed_then_edit(texts):
        thread.start()
        locked.wait(10)
        return HASH4.embed(texts).tolist()

    stub.embed_fn = embed_then_edit

    assert rows_reembed(target="kg").rows == 0
    thread.join(10)
    assert waited.is_set()
    stored = Entity.objects.get(pk=entity.pk)
    assert (stored.name, stored.embedding) == ("PostgreSQL", None)

    stub.embed_fn = lambda texts: HASH4.embed(texts).tolist()
    assert rows_reembed(target="kg").rows == 1
    stored = Entity.objects.get(pk=entity.pk)
    assert np.allclose(stored.embedding, HASH4.embed(["PostgreSQL (technology)"])[0])
