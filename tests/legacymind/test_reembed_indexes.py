"""``reembed`` taking a table's HNSW index out while it rewrites most of the table, building it
again afterwards (also after a failure or, on the next run, after a kill), and leaving an index
alone that another run has out. These run outside a test transaction: indexes are dropped and
built ``CONCURRENTLY``, which Postgres refuses inside one."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from io import StringIO

import numpy as np
import psycopg
import pytest
from django.core.management import CommandError, call_command
from django.db import connection, transaction

from kg.models import Entity
from legacymind.errors import ServiceError
from legacymind.providers.embeddings import EmbeddingError, HashEmbedder
from legacymind.vectors.indexes import _lock_key, index_repair, index_state, vector_index
from legacymind.vectors.reembed import rows_reembed
from legacymind.vectors.search import nearest
from tests.kg.factories import EntityFactory, ThoughtFactory
from tests.support.roles import acting_as
from thoughts.models import Thought

pytestmark = pytest.mark.django_db(transaction=True)

INDEX = "kg_entity_emb_384"
HASH = HashEmbedder(dim=384)


def _indexdef() -> str | None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = %s", [INDEX])
        row = cursor.fetchone()
    return row[0] if row else None


def _drop() -> None:
    with connection.schema_editor(atomic=False) as editor:
        editor.remove_index(Entity, vector_index(Entity, 384))


@pytest.fixture(autouse=True)
def index_back() -> Iterator[str | None]:
    """The index as the migrations define it, before the test and (rebuilt if need be) after,
    so the rest of the suite finds it."""
    before = _indexdef()
    assert before is not None
    yield before
    index_repair(tables=[Entity], dims=(384,))
    assert _indexdef() == before


@pytest.fixture
def entities(settings) -> list[Entity]:
    settings.EMBEDDING_PROVIDER = "hash"
    settings.EMBEDDING_DIM = 384
    settings.REEMBED_INDEX_REBUILD_MIN_ROWS = 4
    names = ["Postgres", "pgvector", "Redis", "Celery", "Django", "Ada Lovelace", "Python"]
    return [EntityFactory(name=name, entity_type="technology") for name in names]


def _states() -> tuple[list[str], Callable[[int, int], None]]:
    seen: list[str] = []

    def progress(done: int, total: int) -> None:
        if done > 0:  # after a batch was written
            seen.append(index_state(INDEX))

    return seen, progress


def test_a_run_rewriting_most_of_a_table_takes_the_index_out_and_builds_it_again(
    entities, index_back
):
    seen, progress = _states()

    summary = rows_reembed(target="kg", batch_size=3, progress=progress)

    assert seen == ["missing", "missing", "missing"]  # 7 rows in batches of 3
    assert index_state(INDEX) == "valid"
    assert _indexdef() == index_back  # the migration's definition: name, m, ef, condition
    table = summary.tables["kg_entities"]
    assert (table.embedded, table.index_rebuilt) == (7, INDEX)
    assert table.index_seconds > 0
    assert summary.tables["kg_observations"].index_rebuilt is None  # nothing to write there
    stored = Entity.objects.get(name="Redis")
    assert np.allclose(stored.embedding, HASH.embed(["Redis (technology)"])[0], atol=1e-6)


def test_searches_give_the_same_answers_while_the_index_is_out(settings):
    settings.EMBEDDING_PROVIDER = "hash"
    settings.EMBEDDING_DIM = 384
    names = ["vector database engine", "vector database", "vector", "garden roses", "river"]
    for name in names:
        EntityFactory(name=name, entity_type="concept")
    rows_reembed(target="kg", index="keep")
    query = HASH.embed(["vector database engine room (concept)"])[0]
    matrix = HASH.embed([f"{name} (concept)" for name in names])
    exact = [names[i] for i in np.argsort(-(matrix @ query))[:3]]

    def top3() -> list[str]:
        return [e.name for e in nearest(Entity.objects.all(), query.tolist(), 3, model=HASH.model)]

    during: list[list[str]] = []
    rows_reembed(
        target="kg", all_rows=True, index="rebuild", progress=lambda done, _: during.append(top3())
    )

    assert exact == ["vector database engine", "vector database", "vector"]
    assert during == [exact, exact]  # before the first batch (index in) and after it (out)
    assert top3() == exact  # and with the index back


def test_a_run_rewriting_a_small_part_of_a_table_keeps_the_index(entities, settings):
    rows_reembed(target="kg")
    Entity.objects.filter(name__in=["Redis", "Celery"]).update(embedding_model="old-model")
    settings.REEMBED_INDEX_REBUILD_MIN_ROWS = 1
    seen, progress = _states()

    summary = rows_reembed(target="kg", progress=progress)

    assert summary.rows == 2
    assert seen == ["valid"]  # 2 of 7 rows: inserting two vectors beats a whole build
    assert summary.tables["kg_entities"].index_rebuilt is None


def test_a_run_below_the_minimum_keeps_the_index(entities, settings):
    settings.REEMBED_INDEX_REBUILD_MIN_ROWS = 8
    seen, progress = _states()

    assert rows_reembed(target="kg", progress=progress).rows == 7
    assert seen == ["valid"]


def test_index_keep_never_takes_it_out(entities):
    seen, progress = _states()

    summary = rows_reembed(target="kg", batch_size=4, index="keep", progress=progress)

    assert summary.rows == 7
    assert seen == ["valid", "valid"]
    assert summary.tables["kg_entities"].index_rebuilt is None


def test_a_provider_failure_midway_still_builds_the_index_again(entities, settings, openai_stub):
    settings.EMBEDDING_PROVIDER = "openai"
    settings.OPENAI_API_KEY = "sk-test"
    settings.OPENAI_BASE_URL = openai_stub.base_url
    settings.EMBEDDING_MAX_RETRIES = 0
    calls = {"n": 0}

    def second_call_fails(texts):
        calls["n"] += 1
        return [[] for _ in texts] if calls["n"] == 2 else HASH.embed(texts).tolist()

    openai_stub.embed_fn = second_call_fails

    with pytest.raises(EmbeddingError, match="3 rows were re-embedded before this"):
        rows_reembed(target="kg", batch_size=3)

    assert index_state(INDEX) == "valid"
    assert Entity.objects.filter(embedding_model="text-embedding-3-small").count() == 3


def test_the_next_run_builds_again_an_index_a_killed_run_left_out(entities, index_back):
    _drop()  # what a run killed between taking the index out and building it leaves
    assert index_state(INDEX) == "missing"

    summary = rows_reembed(target="thoughts")  # nothing to embed there

    assert summary.repaired == [INDEX]
    assert _indexdef() == index_back


def test_the_next_run_replaces_an_index_whose_build_was_killed(entities, index_back):
    # A killed CREATE INDEX CONCURRENTLY leaves the index behind, marked invalid.
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE pg_index SET indisvalid = false WHERE indexrelid = %s::regclass", [INDEX]
        )
    assert index_state(INDEX) == "invalid"

    assert rows_reembed(target="thoughts").repaired == [INDEX]
    assert index_state(INDEX) == "valid"


def test_an_index_another_run_has_out_is_left_to_that_run(entities):
    _drop()
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    with psycopg.connect(**params, autocommit=True) as other:
        other.execute("SELECT pg_advisory_lock(%s)", [_lock_key(INDEX)])  # that run's lock

        summary = rows_reembed(target="kg")

        assert summary.repaired == []
        assert summary.rows == 7  # written, with the index out (no insertions either way)
        assert index_state(INDEX) == "missing"
    # That run's connection has gone (killed): the next run builds the index.
    assert rows_reembed(target="kg").repaired == [INDEX]


def test_rebuild_inside_a_transaction_is_a_clear_error_and_writes_nothing(entities, user):
    ThoughtFactory(owner=user, content="written before the graph, were it not refused first")
    with transaction.atomic():
        with pytest.raises(ServiceError, match="cannot run inside a transaction"):
            rows_reembed(target="all", index="rebuild")
        assert not Thought.objects.filter(embedding_model=HASH.model).exists()

    assert not Entity.objects.filter(embedding__isnull=False).exists()
    assert index_state(INDEX) == "valid"


def test_auto_inside_a_transaction_keeps_the_index(entities):
    with transaction.atomic():
        assert rows_reembed(target="kg").rows == 7
        assert index_state(INDEX) == "valid"


def test_the_command_reports_the_index_and_rejects_a_bad_mode(entities):
    out, err = StringIO(), StringIO()
    call_command("reembed", "--target", "kg", "--dry-run", stdout=out, stderr=err)
    assert "kg_entities: 0 embedded, 7 selected, 7 pending at start; its HNSW index would be " in (
        out.getvalue()
    )
    assert index_state(INDEX) == "valid"

    call_command("reembed", "--target", "kg", stdout=out, stderr=err)
    assert f"index {INDEX} built again in " in out.getvalue()
    assert f"{INDEX}: taken out while kg_entities is rewritten" in err.getvalue()
    assert f"{INDEX}: building it again" in err.getvalue()

    with pytest.raises(CommandError, match="invalid choice: 'sometimes'"):
        call_command("reembed", "--index", "sometimes", stdout=out, stderr=err)


def test_the_service_rejects_a_bad_mode_with_the_field_named(entities):
    with pytest.raises(ServiceError) as excinfo:
        rows_reembed(index="sometimes")

    assert excinfo.value.fields == {"index": ["one of auto, keep, rebuild"]}
    assert not Entity.objects.filter(embedding__isnull=False).exists()


@pytest.fixture
def not_owner() -> Iterator[None]:
    """The run's connection acting as a role that may read and update the tables but does not
    own them (as on a database where migrations ran as another role): Postgres refuses it the
    DROP INDEX."""
    tables = "kg_entity, kg_observation, thoughts_thought"
    with acting_as("lm_not_owner", grants=(f"GRANT SELECT, UPDATE ON {tables} TO {{role}}",)):
        yield


def test_a_drop_the_database_refuses_keeps_the_index_and_says_so(entities, not_owner):
    lines: list[str] = []
    seen, progress = _states()

    summary = rows_reembed(target="kg", progress=progress, notice=lines.append)

    assert summary.rows == 7  # written with the index in place
    assert seen == ["valid"]
    assert summary.tables["kg_entities"].index_rebuilt is None
    assert lines[0].startswith(f"{INDEX}: kept in place, the database refused to drop it (")
    assert "must be owner" in lines[0]


def test_a_drop_the_database_refuses_is_an_error_with_index_rebuild(entities, not_owner):
    with pytest.raises(ServiceError, match=f"could not take {INDEX} out: .*must be owner"):
        rows_reembed(target="kg", index="rebuild")

    assert not Entity.objects.filter(embedding__isnull=False).exists()
    assert index_state(INDEX) == "valid"
