"""``rows_reembed(stop=...)``: what a cancelled background reembed relies on. The run asks
``stop`` before each table and after every batch; a yes ends it there, with every batch written
so far kept whole (its vectors and their provenance), nothing of the batch the model had already
embedded ahead, an index taken out built again, and the next run picking up the rest. Run
outside a test transaction: an index is dropped and built ``CONCURRENTLY``."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
import pytest
from django.db import connection

from kg.models import Entity
from legacymind.providers.embeddings import HashEmbedder
from legacymind.vectors.indexes import index_repair, index_state
from legacymind.vectors.reembed import rows_reembed
from tests.kg.factories import EntityFactory, ThoughtFactory
from thoughts.models import Thought

pytestmark = pytest.mark.django_db(transaction=True)

HASH = HashEmbedder(dim=384)
INDEX = "kg_entity_emb_384"


@pytest.fixture(autouse=True)
def hash_384(settings) -> None:
    settings.EMBEDDING_PROVIDER = "hash"
    settings.EMBEDDING_DIM = 384


@pytest.fixture
def thoughts(user) -> None:
    for i in range(7):
        ThoughtFactory(owner=user, content=f"harbour log entry {i}")


def _stop_after(asks: int) -> tuple[Callable[[], bool], list[int]]:
    """A stop that says yes from its ``asks``-th question on, and the questions it was asked."""
    asked: list[int] = []

    def stop() -> bool:
        asked.append(len(asked) + 1)
        return len(asked) >= asks

    return stop, asked


def _embedded_in_order() -> list[bool]:
    return [t.embedding is not None for t in Thought.objects.order_by("pk")]


def _consistent(thought: Thought) -> None:
    """A written row: the vector of its own text, and the provenance of the model that made it."""
    assert thought.embedding is not None
    assert np.allclose(thought.embedding, HASH.embed([thought.content])[0], atol=1e-6)
    assert (thought.embedding_provider, thought.embedding_dim) == ("hash", 384)
    assert thought.embedding_model == HASH.model and thought.embedded_at is not None


def test_a_stop_after_the_first_batch_keeps_that_batch_and_writes_no_more(thoughts):
    stop, asked = _stop_after(2)  # asked before the table, then after the first batch
    seen: list[tuple[int, int]] = []

    summary = rows_reembed(
        target="thoughts", batch_size=2, stop=stop, progress=lambda *p: seen.append(p)
    )

    assert summary.stopped and asked == [1, 2]
    assert (summary.rows, summary.remaining) == (2, 5)
    assert seen == [(0, 7), (2, 7)]
    # The first batch in primary-key order, whole; the next one (already embedded by the
    # model meanwhile) is not written, nor is any row after it.
    assert _embedded_in_order() == [True, True, False, False, False, False, False]
    first, second, *rest = Thought.objects.order_by("pk")
    _consistent(first)
    _consistent(second)
    assert all(t.embedding_provider is None and t.embedded_at is None for t in rest)

    again = rows_reembed(target="thoughts", batch_size=2)

    assert not again.stopped and (again.rows, again.remaining) == (5, 0)
    assert all(_embedded_in_order())
    for thought in Thought.objects.all():
        _consistent(thought)


def test_a_stop_before_the_first_table_writes_nothing(thoughts):
    stop, asked = _stop_after(1)

    summary = rows_reembed(target="all", batch_size=2, stop=stop)

    assert summary.stopped and asked == [1]
    assert summary.rows == 0 and summary.tables["thoughts"].selected == 7
    assert not any(_embedded_in_order())


def test_a_stop_in_the_first_table_leaves_the_next_tables_alone(thoughts):
    EntityFactory(name="Harbour Crane", entity_type="machine")
    stop, _ = _stop_after(3)  # before the table, after batch 1, after batch 2

    summary = rows_reembed(target="all", batch_size=3, stop=stop)

    assert summary.stopped
    assert summary.tables["thoughts"].embedded == 6
    assert summary.tables["kg_entities"].embedded == 0
    assert Entity.objects.get().embedding is None
    assert _embedded_in_order() == [True] * 6 + [False]


@pytest.fixture
def index_back(settings) -> Iterator[None]:
    """The KG's index as the migrations define it, after the test too."""
    settings.REEMBED_INDEX_REBUILD_MIN_ROWS = 4
    yield
    index_repair(tables=[Entity], dims=(384,))
    assert index_state(INDEX) == "valid"


def test_a_stop_while_the_index_is_out_builds_it_again(index_back):
    for i in range(7):
        EntityFactory(name=f"Crane {i}", entity_type="machine")
    states: list[str] = []
    stop, _ = _stop_after(2)

    def progress(done: int, total: int) -> None:
        if done:  # after a batch was written
            states.append(index_state(INDEX))

    summary = rows_reembed(
        target="kg",
        batch_size=3,
        index="rebuild",
        stop=stop,
        progress=progress,
    )

    assert summary.stopped and states == ["missing"]  # out while the first batch was written
    assert index_state(INDEX) == "valid"  # and built again before the run returned
    assert summary.tables["kg_entities"].index_rebuilt == INDEX
    assert summary.tables["kg_entities"].embedded == 3
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM kg_entity WHERE embedding IS NOT NULL")
        assert cursor.fetchone() == (3,)
