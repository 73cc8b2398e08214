"""Vector columns and nearest-neighbour search shared by every embedded table.

Each table has one untyped ``vector`` column plus ``embedding_dim``, and a partial HNSW index per
supported dimension on ``embedding::vector(N)``. Queries cast the same way, with the dimension as
a literal (a prepared plan with the dimension as a parameter falls back to a sequential scan), and
filter on ``embedding_dim`` so that vectors of different models are never compared.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from django.conf import settings
from django.db import models
from django.db.models.expressions import RawSQL
from django.db.models.functions import Cast
from pgvector.django import CosineDistance, HnswIndex, VectorField

M = TypeVar("M", bound=models.Model)


class EmbeddedModel(models.Model):
    """Embedding and its provenance: provider, model, dimension and when it was computed."""

    embedding = VectorField(null=True, blank=True)
    embedding_provider = models.CharField(max_length=32, null=True, blank=True)
    embedding_model = models.CharField(max_length=128, null=True, blank=True, db_index=True)
    embedding_dim = models.PositiveIntegerField(null=True, blank=True, db_index=True)
    embedded_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True


def hnsw_indexes(prefix: str) -> list[models.Index]:
    """One partial cosine HNSW index per indexed dimension, e.g. ``thought_emb_384``."""
    from django.contrib.postgres.indexes import OpClass
    from django.db.models import Q

    return [
        HnswIndex(
            OpClass(Cast("embedding", VectorField(dimensions=dim)), name="vector_cosine_ops"),
            name=f"{prefix}_emb_{dim}",
            condition=Q(embedding_dim=dim),
            m=16,
            ef_construction=64,
        )
        for dim in (384, 1536)
    ]


def nearest(queryset: models.QuerySet[M], vector: Sequence[float], k: int) -> models.QuerySet[M]:
    """The ``k`` rows nearest to ``vector`` by cosine distance, among rows of the same dimension.

    Rows carry ``distance`` (0 = same direction) and ``similarity`` (1 - distance). For the
    indexed dimensions the query uses the partial HNSW index (approximate, ``hnsw.ef_search``
    sets the recall/speed trade-off); other dimensions are searched exactly.
    """
    dim = len(vector)
    if dim == 0:
        raise ValueError("cannot search with an empty vector")
    if k <= 0:
        return queryset.none()
    distance = CosineDistance(Cast("embedding", VectorField(dimensions=dim)), list(vector))
    # The dimension goes into the SQL text, not a bound parameter: the planner can only match
    # the partial index's ``WHERE embedding_dim = 384`` against a literal (with server-side
    # binding a generic plan would otherwise fall back to a sequential scan).
    same_dim = RawSQL(str(int(dim)), ())
    return (
        queryset.filter(embedding_dim=same_dim, embedding__isnull=False)
        .annotate(distance=distance)
        .annotate(similarity=1 - models.F("distance"))
        .order_by("distance")[:k]
    )


def indexed_dims() -> tuple[int, ...]:
    return tuple(settings.VECTOR_INDEXED_DIMS)
