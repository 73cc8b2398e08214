"""Re-embedding: ``manage.py reembed``, the ``rows_reembed`` service and its Celery task."""

from __future__ import annotations

import json
from io import StringIO

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from kg.models import Entity, Observation
from legacymind.errors import ServiceError
from legacymind.providers.embeddings import EmbeddingError, HashEmbedder
from legacymind.tasks import rows_reembed_task
from legacymind.vectors.reembed import rows_reembed
from tests.kg.factories import EntityFactory, ThoughtFactory
from tests.support.openai_server import use_openai_embeddings
from thoughts.models import Thought

pytestmark = pytest.mark.django_db

HASH = HashEmbedder(dim=384)


@pytest.fixture
def rows(user):
    thoughts = [ThoughtFactory(owner=user, content=f"thought number {i}") for i in range(3)]
    entities = [
        EntityFactory(name="Postgres", entity_type="technology"),
        EntityFactory(name="Ada Lovelace", entity_type="person"),
    ]
    observations = [
        Observation.objects.create(name="Backups", description="nightly at 2am"),
        Observation.objects.create(name="Uptime"),
    ]
    return {"thoughts": thoughts, "entities": entities, "observations": observations}


def _sent(stub) -> list[str]:
    return [text for r in stub.requests for text in r["body"]["input"]]


def _all_rows():
    return [*Thought.objects.all(), *Entity.objects.all(), *Observation.objects.all()]


def _run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("reembed", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_dry_run_counts_rows_and_writes_nothing(rows):
    out, _ = _run("--dry-run")

    assert "would re-embed 7 row(s)" in out
    assert "nothing written" in out
    assert "thoughts: 0 embedded, 3 selected, 3 pending" in out
    assert all(row.embedding is None and row.embedding_provider is None for row in _all_rows())


def test_reembed_embeds_each_table_with_the_original_texts_and_records_provenance(rows):
    out, err = _run()

    assert "Re-embedded 7 row(s)" in out
    assert "rows/s" in out
    assert "reembed" in err and "7/7" in err  # the progress bar
    expected = {
        "Postgres": "Postgres (technology)",
        "Ada Lovelace": "Ada Lovelace (person)",
        "Backups": "Backups - nightly at 2am",
        "Uptime": "Uptime",
    }
    for row in [*Entity.objects.all(), *Observation.objects.all()]:
        assert np.allclose(row.embedding, HASH.embed([expected[row.name]])[0], atol=1e-6)
    for thought in Thought.objects.all():
        assert np.allclose(thought.embedding, HASH.embed([thought.content])[0], atol=1e-6)
    for row in _all_rows():
        assert (row.embedding_provider, row.embedding_model, row.embedding_dim) == (
            "hash",
            "feature-hash-384",
            384,
        )
        assert row.embedded_at is not None


def test_second_run_finds_nothing_to_do(rows):
    _run()
    stamps = {row.pk: row.embedded_at for row in Entity.objects.all()}

    summary = rows_reembed(target="all")

    assert summary.rows == 0
    assert {row.pk: row.embedded_at for row in Entity.objects.all()} == stamps


def test_switching_provider_reembeds_only_rows_from_another_model(rows, settings, openai_stub):
    rows_reembed(target="all")
    untouched = rows["thoughts"][0]
    # As if an earlier openai run had already done this one.
    Thought.objects.filter(pk=untouched.pk).update(
        embedding=HashEmbedder(dim=4).embed(["kept"])[0],
        embedding_provider="openai",
        embedding_model="text-embedding-3-small",
        embedding_dim=4,
    )
    stamp = Thought.objects.get(pk=untouched.pk).embedded_at
    stub = use_openai_embeddings(settings, openai_stub)

    summary = rows_reembed(target="all")

    assert summary.rows == 6
    assert sorted(_sent(stub)) == sorted(
        [
            "thought number 1",
            "thought number 2",
            "Postgres (technology)",
            "Ada Lovelace (person)",
            "Backups - nightly at 2am",
            "Uptime",
        ]
    )
    kept = Thought.objects.get(pk=untouched.pk)
    assert kept.embedded_at == stamp
    assert np.allclose(kept.embedding, HashEmbedder(dim=4).embed(["kept"])[0])
    assert {(r.embedding_provider, r.embedding_dim) for r in _all_rows()} == {("openai", 4)}


def test_a_changed_dimension_counts_as_another_model(rows, settings):
    rows_reembed(target="kg")
    settings.EMBEDDING_DIM = 64

    summary = rows_reembed(target="kg")

    assert summary.rows == 4
    assert {r.embedding_dim for r in [*Entity.objects.all(), *Observation.objects.all()]} == {64}


def test_limit_then_a_second_run_finishes_the_rest(rows):
    out, _ = _run("--limit", "4", "--batch-size", "3")

    assert "Re-embedded 4 row(s)" in out
    assert "3 row(s) still pending: run again to continue." in out
    assert sum(row.embedding is not None for row in _all_rows()) == 4

    out, _ = _run("--batch-size", "3")

    assert "Re-embedded 3 row(s)" in out
    assert all(row.embedding is not None for row in _all_rows())


def test_all_redoes_every_row(rows):
    _run("--target", "kg")
    before = {row.pk: row.embedded_at for row in Entity.objects.all()}

    out, _ = _run("--target", "kg", "--all")

    assert "Re-embedded 4 row(s) (every row)" in out
    after = {row.pk: row.embedded_at for row in Entity.objects.all()}
    assert all(after[pk] > before[pk] for pk in before)


def test_target_thoughts_leaves_the_graph_alone(rows):
    summary = rows_reembed(target="thoughts")

    assert summary.rows == 3
    assert set(summary.tables) == {"thoughts"}
    assert all(e.embedding is None for e in Entity.objects.all())


def test_writes_are_batched_not_row_by_row(user):
    def queries_for(n: int) -> int:
        Thought.objects.all().delete()
        for i in range(n):
            ThoughtFactory(owner=user, content=f"t{i}")
        with CaptureQueriesContext(connection) as ctx:
            assert rows_reembed(target="thoughts", batch_size=100).rows == n
        return len(ctx.captured_queries)

    assert queries_for(5) == queries_for(60)


def test_a_provider_failure_keeps_finished_batches_and_a_rerun_finishes(
    rows, settings, openai_stub
):
    stub = use_openai_embeddings(settings, openai_stub)
    calls = {"n": 0}

    def flaky(texts):
        calls["n"] += 1
        return [[] for _ in texts] if calls["n"] == 2 else HashEmbedder(dim=4).embed(texts).tolist()

    stub.embed_fn = flaky

    with pytest.raises(EmbeddingError) as excinfo:
        rows_reembed(target="thoughts", batch_size=2)

    assert "empty vector" in excinfo.value.detail
    assert "2 rows were re-embedded before this; run again to resume" in excinfo.value.detail
    stored = [t for t in Thought.objects.all() if t.embedding is not None]
    assert len(stored) == 2
    assert all(t.embedding_provider == "openai" for t in stored)

    assert rows_reembed(target="thoughts", batch_size=2).rows == 1
    assert all(t.embedding is not None for t in Thought.objects.all())


def test_a_dimension_mismatch_is_never_stored(rows, settings, openai_stub):
    stub = use_openai_embeddings(settings, openai_stub)
    stub.embed_fn = lambda texts: [[1.0, 0.0, 0.0] for _ in texts]

    with pytest.raises(CommandError, match="3-d vectors, expected 4-d"):
        _run("--target", "kg")

    assert all(r.embedding is None for r in [*Entity.objects.all(), *Observation.objects.all()])


def test_the_celery_task_does_the_same_work(rows):
    result = rows_reembed_task.apply(kwargs={"target": "kg", "batch_size": 3}).get()

    assert json.loads(json.dumps(result)) == result  # the JSON result backend can carry it
    assert result["rows"] == 4
    assert result["provider"] == "hash"
    assert result["tables"]["kg_entities"]["embedded"] == 2
    assert all(e.embedding is not None for e in Entity.objects.all())
    assert all(t.embedding is None for t in Thought.objects.all())


def test_the_celery_task_dry_run_writes_nothing(rows):
    result = rows_reembed_task.apply(kwargs={"dry_run": True}).get()

    assert result["rows"] == 0
    assert result["tables"]["thoughts"]["selected"] == 3
    assert all(row.embedding is None for row in _all_rows())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--target", "memories"), "invalid choice: 'memories'"),
        (("--batch-size", "0"), "--batch-size: must be between 1 and 2048, not 0"),
        (("--batch-size", "5000"), "--batch-size: must be between 1 and 2048, not 5000"),
        (("--limit", "0"), "--limit: must be at least 1"),
        (("--limit", "many"), "invalid int value: 'many'"),
    ],
)
def test_bad_arguments_give_a_clear_error_and_write_nothing(rows, args, message):
    with pytest.raises(CommandError, match=message):
        _run(*args)

    assert all(row.embedding is None for row in _all_rows())


def test_the_service_rejects_a_bad_target_with_the_field_named(rows):
    with pytest.raises(ServiceError) as excinfo:
        rows_reembed(target="memories")

    assert excinfo.value.fields == {"target": ["one of thoughts, kg, all"]}


@pytest.mark.django_db(transaction=True)
def test_a_row_edited_while_its_batch_is_embedded_is_not_overwritten(settings, openai_stub):
    entity = EntityFactory(name="Postgres", entity_type="technology")
    stub = use_openai_embeddings(settings, openai_stub)

    def embed_while_someone_renames(texts):
        if "Postgres (technology)" in texts:
            # Another connection commits an edit after the batch was read, before it is written.
            Entity.objects.filter(pk=entity.pk).update(name="PostgreSQL")
            connection.close()  # this runs in the stub's thread, on its own connection
        return HashEmbedder(dim=4).embed(texts).tolist()

    stub.embed_fn = embed_while_someone_renames

    assert rows_reembed(target="kg").rows == 0
    assert Entity.objects.get(pk=entity.pk).embedding is None  # still pending, not stale

    assert rows_reembed(target="kg").rows == 1
    stored = Entity.objects.get(pk=entity.pk)
    assert np.allclose(stored.embedding, HashEmbedder(dim=4).embed(["PostgreSQL (technology)"])[0])


def test_all_with_a_limit_says_that_a_rerun_starts_over(rows):
    out, _ = _run("--all", "--limit", "2")

    assert "Re-embedded 2 row(s) (every row)" in out
    assert "5 row(s) not reached: --all starts over on every run" in out
