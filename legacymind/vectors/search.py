"""Vector columns and nearest-neighbour search shared by every embedded table.

Each table has one untyped ``vector`` column plus ``embedding_dim``, and a partial HNSW index per
supported dimension on ``embedding::halfvec(N)``: the graph stores half-precision copies (half
the index, faster to build and to walk; pgvector >= 0.7), while the column keeps full precision.
Queries order by the same cast, with the dimension as a literal (a prepared plan with the
dimension as a parameter falls back to a sequential scan), and filter on ``embedding_dim`` and
``embedding_model`` so that vectors of different models are never compared: two models of the
same dimension (all-MiniLM-L6-v2 and text-embedding-3-small cut to 384, say) share an index but
not a space. After a change of model, rows keep the old model's vectors until ``manage.py
reembed`` rewrites them, and searches skip them until then (its batch writes are in
``legacymind.vectors.writes``). The query vector goes to the server in binary
(``legacymind.vectors.binding``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from django.conf import settings
from django.core.exceptions import EmptyResultSet
from django.db import connections, models
from django.db.models import Case, F, FloatField, QuerySet, When
from django.db.models.expressions import RawSQL
from django.db.models.functions import Cast
from django.db.models.query import ModelIterable
from django.db.models.sql import Query
from pgvector.django import CosineDistance, HalfVectorField, HnswIndex, VectorField

from legacymind.vectors.binding import BinaryVector, binding_cursor, vector_literal

M = TypeVar("M", bound=models.Model)


class EmbeddedModel(models.Model):
    """Embedding and its provenance: provider, model, dimension and when it was computed."""

    embedding = VectorField(null=True, blank=True)
    embedding_provider = models.CharField(max_length=32, null=True, blank=True)
    # Indexed by ``embedding_indexes`` as a plain btree: ``db_index`` would add a second,
    # ``varchar_pattern_ops`` copy for LIKE that no query uses, and every reembed update of the
    # column (never HOT: it is indexed) writes an entry into each.
    embedding_model = models.CharField(max_length=128, null=True, blank=True)
    embedding_dim = models.PositiveIntegerField(null=True, blank=True, db_index=True)
    embedded_at = models.DateTimeField(null=True, blank=True)

    # What ``reembed`` needs of each concrete table (it finds them by this base class): a label,
    # the target that takes it (thoughts or kg), and the columns its text is made of.
    reembed_label: ClassVar[str]
    reembed_target: ClassVar[str]
    reembed_columns: ClassVar[tuple[str, ...]]

    class Meta:
        abstract = True

    @staticmethod
    def reembed_text(*values: Any) -> str:
        """The text a row embeds as, from the values of ``reembed_columns`` in that order."""
        return " ".join(str(v) for v in values)


def embedding_indexes(prefix: str) -> list[models.Index]:
    """The embedded table's indexes: ``embedding_model`` (the stale-row filter of reembed and
    the model filter of searches) and the partial HNSW indexes (``hnsw_indexes``)."""
    return [
        models.Index(fields=["embedding_model"], name=f"{prefix}_model_idx"),
        *hnsw_indexes(prefix),
    ]


def hnsw_indexes(prefix: str) -> list[models.Index]:
    """One partial cosine HNSW index per indexed dimension, e.g. ``thought_emb_384``."""
    from django.contrib.postgres.indexes import OpClass
    from django.db.models import Q

    return [
        HnswIndex(
            OpClass(Cast("embedding", HalfVectorField(dimensions=dim)), name="halfvec_cosine_ops"),
            name=f"{prefix}_emb_{dim}",
            condition=Q(embedding_dim=dim),
            m=16,
            ef_construction=64,
        )
        for dim in (384, 1536)
    ]


def nearest_queryset(
    queryset: models.QuerySet[M], vector: Sequence[float], k: int, *, model: str | None
) -> models.QuerySet[M]:
    """The ``k`` rows nearest to ``vector`` by cosine distance, among rows of the same dimension
    embedded by ``model`` (the model that embedded ``vector``; None: any model of that
    dimension, for callers that know every row shares one), as a queryset to build on (a union,
    ``values_list``, ``explain``). ``nearest`` runs the same query for callers that want the
    rows.

    Rows carry ``distance`` (0 = same direction) and ``similarity`` (1 - distance), computed
    in full precision. For the indexed dimensions the order is the partial HNSW index's
    (approximate, half precision: ``hnsw.ef_search`` sets the recall/speed trade-off, and rows
    within ~1e-4 of each other may come in either order); other dimensions are searched
    exactly.
    """
    dim = len(vector)
    if dim == 0:
        raise ValueError("cannot search with an empty vector")
    if k <= 0:
        return queryset.none()
    literal = vector_literal(vector)
    distance = CosineDistance(
        Cast("embedding", VectorField(dimensions=dim)), _query_vector(literal, dim, half=False)
    )
    order = (
        CosineDistance(
            Cast("embedding", HalfVectorField(dimensions=dim)),
            _query_vector(literal, dim, half=True),
        )
        if dim in indexed_dims()
        else F("distance")
    )
    # The dimension goes into the SQL text, not a bound parameter: the planner can only match
    # the partial index's ``WHERE embedding_dim = 384`` against a literal (with server-side
    # binding a generic plan would otherwise fall back to a sequential scan).
    same_dim = RawSQL(str(int(dim)), ())
    if model is not None:
        queryset = queryset.filter(embedding_model=model)
    return (
        queryset.filter(embedding_dim=same_dim, embedding__isnull=False)
        .annotate(distance=distance)
        .annotate(similarity=1 - F("distance"))
        .order_by(order)[:k]
    )


def _query_vector(literal: str, dim: int, *, half: bool) -> RawSQL:
    """The query vector in the SQL: its parameter cast to ``vector(dim)`` (and on to
    ``halfvec(dim)`` where the half-precision index orders by it). The cast gives the parameter
    its type, so the same SQL takes the text literal (the ORM's client-side binding) or the
    binary vector of ``binding_cursor`` (a parameter of unknown type, in binary, is typed by
    its cast), and the planner folds it into a constant either way: the index is used."""
    cast = f"%s::vector({int(dim)})" + (f"::halfvec({int(dim)})" if half else "")
    return RawSQL(cast, (literal,), output_field=HalfVectorField() if half else VectorField())


def nearest(
    queryset: models.QuerySet[M], vector: Sequence[float], k: int, *, model: str | None
) -> list[M]:
    """The rows of ``nearest_queryset(queryset, vector, k, model=model)``, nearest first.

    The query is compiled once per base query (``queryset``'s own SQL and parameters: a
    different filter or owner is another entry), dimension, k and model, with a placeholder
    vector, and later calls only put their vector in: building and compiling the ORM query
    was about 1 ms of a 2-4 ms search at 100k rows (docs/benchmarks.md, Retrieval). Querysets
    the raw rows cannot stand for (``values()``, ``select_related``, prefetches) take the
    ORM path every time.
    """
    if len(vector) == 0:
        raise ValueError("cannot search with an empty vector")
    if k <= 0:
        return []
    compiled = _nearest_compiled(queryset, len(vector), k, model)
    if compiled is None:
        return list(nearest_queryset(queryset, vector, k, model=model))
    if compiled is _EMPTY:
        return []
    return _instances(queryset.model, queryset.db, compiled, vector)


@dataclass(frozen=True)
class _RowPlan:
    """How a compiled search's rows become instances: which columns are the model's fields
    (and their converters: position, functions, column expression), which are annotations.
    The functions are the fields' own ``from_db_value`` (the Postgres backend adds none), and
    each search passes them its own thread's connection: nothing here belongs to one."""

    positions: tuple[int, ...]
    names: tuple[str, ...]
    annotations: tuple[tuple[int, str], ...]
    converters: tuple[tuple[int, list[Any], Any], ...]


_ROW_PLANS: dict[tuple[Any, ...], _RowPlan] = {}


def _instances(model: type[M], db: str, compiled: VectorQuery, vector: Sequence[float]) -> list[M]:
    """The search's rows as ``model`` instances, annotations set as attributes, as
    ``RawQuerySet`` would make them. RawQuerySet maps the columns to fields and looks up their
    converters again on every query: ~0.25 ms of a ~1.4 ms search at 100k rows
    (docs/benchmarks.md, Retrieval), so the mapping is kept per compiled query."""
    connection = connections[db]
    with binding_cursor(db) as cursor:
        cursor.execute(compiled.sql, compiled.params(vector))
        rows = cursor.fetchall()
        key = (model, db, compiled.sql)
        plan = _ROW_PLANS.get(key)
        if plan is None:
            plan = _row_plan(model, connection, [column.name for column in cursor.description])
            if len(_ROW_PLANS) >= _COMPILED_MAX:
                _ROW_PLANS.clear()
            _ROW_PLANS[key] = plan
    found = []
    for row in rows:
        if plan.converters:
            row = list(row)
            for i, functions, expression in plan.converters:
                for convert in functions:
                    row[i] = convert(row[i], expression, connection)
        instance = model.from_db(db, plan.names, [row[i] for i in plan.positions])
        for i, name in plan.annotations:
            setattr(instance, name, row[i])
        found.append(instance)
    return found


def _row_plan(model: type[models.Model], connection: Any, columns: list[str]) -> _RowPlan:
    by_column = {field.column: field for field in model._meta.concrete_fields}
    fields = [by_column.get(column) for column in columns]
    if model._meta.pk is None or model._meta.pk not in fields:
        raise RuntimeError(f"a search of {model.__name__} must select its primary key")
    compiler = connection.ops.compiler("SQLCompiler")(Query(model), connection, None)
    table = model._meta.db_table
    converters = compiler.get_converters(
        [field.get_col(table) if field else None for field in fields]
    )
    return _RowPlan(
        positions=tuple(i for i, field in enumerate(fields) if field is not None),
        names=tuple(field.attname for field in fields if field is not None),
        annotations=tuple((i, columns[i]) for i, field in enumerate(fields) if field is None),
        converters=tuple((i, functions, column) for i, (functions, column) in converters.items()),
    )


@dataclass(frozen=True)
class VectorQuery:
    """SQL compiled once with ``PLACEHOLDER`` as its query vector; ``params(vector)`` gives the
    parameters of a search with ``vector`` instead."""

    sql: str
    template: tuple[Any, ...]
    slots: frozenset[int]  # positions of the query vector's literal among the parameters

    @classmethod
    def of(cls, sql: str, params: Sequence[Any], dim: int) -> VectorQuery:
        text = vector_literal(placeholder(dim))
        slots = frozenset(i for i, p in enumerate(params) if p == text)
        if not slots:  # the ORM changed how it passes the vector: never search the placeholder
            raise RuntimeError("the compiled search has no query-vector parameter")
        return cls(sql, tuple(params), slots)

    def params(self, vector: Sequence[float]) -> list[Any]:
        """The parameters for ``binding_cursor``: the query vector in binary at its slots."""
        bound = BinaryVector(vector)
        return [bound if i in self.slots else p for i, p in enumerate(self.template)]


PLACEHOLDER = 0.123456789  # no real parameter of a search is a vector of this value


def placeholder(dim: int) -> list[float]:
    return [PLACEHOLDER] * dim


_EMPTY = VectorQuery("", (), frozenset())  # the base query matches nothing (``none()``)
_COMPILED: OrderedDict[tuple[Any, ...], VectorQuery] = OrderedDict()
_COMPILED_MAX = 512
_COMPILED_LOCK = threading.Lock()


def _nearest_compiled(
    queryset: models.QuerySet[Any], dim: int, k: int, model: str | None
) -> VectorQuery | None:
    """The compiled ``nearest_queryset`` for ``queryset`` (``_EMPTY`` when it matches nothing),
    from the cache when the same base query was seen; None when raw rows cannot stand for the
    queryset's own."""
    if (
        queryset._iterable_class is not ModelIterable  # type: ignore[attr-defined]
        or queryset.query.select_related
        or queryset._prefetch_related_lookups  # type: ignore[attr-defined]
    ):
        return None
    try:
        base = queryset.query.get_compiler(using=queryset.db).as_sql()
    except EmptyResultSet:
        return _EMPTY
    key = (queryset.model, queryset.db, *base, dim, k, model, indexed_dims())
    try:
        with _COMPILED_LOCK:
            found = _COMPILED.get(key)
            if found is not None:
                _COMPILED.move_to_end(key)
                return found
    except TypeError:  # a parameter that cannot be hashed: compile every time
        key = ()
    built = nearest_queryset(queryset, placeholder(dim), k, model=model)
    sql, params = built.query.get_compiler(using=queryset.db).as_sql()
    compiled = VectorQuery.of(sql, params, dim)
    if key:
        with _COMPILED_LOCK:
            _COMPILED[key] = compiled
            while len(_COMPILED) > _COMPILED_MAX:
                _COMPILED.popitem(last=False)
    return compiled


def pgvector_version(using: str = "default") -> str | None:
    """The installed pgvector's version on ``using``'s database, None without the extension."""
    with connections[using].cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        row = cursor.fetchone()
    return row[0] if row else None


def indexed_dims() -> tuple[int, ...]:
    return tuple(settings.VECTOR_INDEXED_DIMS)


def exact_similarity(queryset: QuerySet[Any], vector: list[float], model: str) -> QuerySet[Any]:
    """Rows of the query's dimension and model with ``distance``/``similarity``, computed
    exactly.

    The CASE keeps Postgres from casting a vector of another size (it may evaluate a WHERE on
    the distance before the one on ``embedding_dim``) and, not being the indexed expression,
    keeps the HNSW index out of it.
    """
    dim = len(vector)
    cosine = CosineDistance(Cast("embedding", VectorField(dimensions=dim)), vector)
    distance = Case(When(embedding_dim=dim, then=cosine), default=None, output_field=FloatField())
    return (
        queryset.filter(embedding_dim=dim, embedding_model=model, embedding__isnull=False)
        .annotate(distance=distance)
        .annotate(similarity=1 - F("distance"))
    )


def nearest_or_exact(queryset: QuerySet[Any], vector: list[float], model: str, k: int) -> list[Any]:
    """The k nearest rows of ``queryset`` (with ``similarity``), most similar first."""
    rows = list(nearest(queryset, vector, k, model=model))
    if len(rows) < k:
        # pgvector reads at most hnsw.ef_search index entries (iterative scans are off) and
        # filters them afterwards, so a filtered search (one user's thoughts, one chain) can
        # come back short although more rows match: those rows are then few enough to rank
        # exactly.
        rows = list(exact_similarity(queryset, vector, model).order_by("distance")[:k])
    return rows
