"""How the KG tables are stored: the access bump of a memory never touches the HNSW index."""

from __future__ import annotations

import numpy as np
import pytest
from django.db import connection
from django.utils import timezone

from kg.models import Entity
from thoughts.think.persist import memories_touch

pytestmark = pytest.mark.django_db


def _hot_updates() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_get_xact_tuples_hot_updated('kg_entity'::regclass)")
        return int(cursor.fetchone()[0])


def test_access_bump_of_embedded_entities_is_a_hot_update():
    rng = np.random.default_rng(3)
    rows = []
    for i in range(12):
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
    # Every third row: one per page when pages keep room (three 1.7 KB rows each); on full
    # pages (four rows) no new version fits beside the old one and the index gets a new entry.
    chosen = [e.pk for e in rows[::3]]
    before = _hot_updates()
    touched = memories_touch(entity_ids=chosen, observation_ids=[], at=timezone.now())
    assert touched == len(chosen) == 4
    assert _hot_updates() - before == len(chosen)
    assert Entity.objects.get(pk=chosen[0]).access_count == 1
