"""How the KG tables are stored: the access bump of a memory never touches the HNSW index."""

from __future__ import annotations

import numpy as np
import pytest
from django.db import connection
from django.utils import timezone

from kg.models import Entity
from kg.services import memories_touch

pytestmark = pytest.mark.django_db


def _hot_updates() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_get_xact_tuples_hot_updated('kg_entity'::regclass)")
        return int(cursor.fetchone()[0])


def _embedded_entities(count: int) -> list[Entity]:
    rng = np.random.default_rng(3)
    rows = []
    for i in range(count):
        vector = rng.standard_normal(384).astype(np.float32)
        rows.append(
            Entity.objects.create(
                name=f"memory {i}",
                embedding=(vector / np.linalg.norm(vector)).tolist(),
                embedding_dim=384,
                embedding_model="test",
                embedding_provider="hash",
            )
        )
    return rows


def test_access_bump_of_embedded_entities_is_a_hot_update():
    rows = _embedded_entities(12)
    # Every third row: on full pages (four 1.7 KB rows) no new version fits beside the old one
    # and the index gets a new entry.
    chosen = [e.pk for e in rows[::3]]
    before = _hot_updates()
    touched = memories_touch(entity_ids=chosen, observation_ids=[], at=timezone.now())
    assert touched == len(chosen) == 4
    assert _hot_updates() - before == len(chosen)
    assert Entity.objects.get(pk=chosen[0]).access_count == 1


def test_a_bump_of_every_row_created_together_is_hot():
    # Memories used together were mostly created together and share pages; one batched bump
    # updates them all at once. Two rows a page leave room for both new versions (kg 0004);
    # at three a page (0003's 75%) only one fitted and the others went to the HNSW index.
    rows = _embedded_entities(12)
    before = _hot_updates()
    touched = memories_touch(entity_ids=[e.pk for e in rows], observation_ids=[], at=timezone.now())
    assert touched == 12
    assert _hot_updates() - before == 12
