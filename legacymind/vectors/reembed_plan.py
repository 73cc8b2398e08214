"""What a re-embed run works on and what it reports: the embedded tables, the callbacks a
caller passes, and the summary (``legacymind.vectors.reembed`` is the way in)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from django.apps import apps
from django.db import models

from legacymind.vectors.search import EmbeddedModel

Progress = Callable[[int, int], None]
"""Called with (rows done, rows this run will do): once before the first batch, then after
every batch."""
Notice = Callable[[str], None]
"""Called with a line for the operator: an index taken out or being built again."""
Stop = Callable[[], bool]
"""Asked before each table and after every batch: True ends the run there (a background job
cancelled). The batches written so far stay, as after Ctrl-C."""


@dataclass(frozen=True)
class EmbeddedTable:
    label: str
    model: type[models.Model]
    columns: tuple[str, ...]  # what the text needs: nothing else is read
    text: Callable[..., str]  # the text, from the values of ``columns`` in that order


def embedded_tables(target: str) -> list[EmbeddedTable]:
    """The tables that hold vectors (``target``: thoughts, kg or all), each with what its rows
    embed as."""
    return [
        EmbeddedTable(m.reembed_label, m, m.reembed_columns, m.reembed_text)
        for m in apps.get_models()
        if issubclass(m, EmbeddedModel) and target in ("all", m.reembed_target)
    ]


def embedded_models() -> list[type[models.Model]]:
    return [table.model for table in embedded_tables("all")]


@dataclass
class TableSummary:
    pending: int  # rows needing an embedding when the run started (all rows with all_rows)
    selected: int  # of those, the rows this run takes on (after limit)
    embedded: int = 0
    rebuild: bool = False  # whether the run takes the table's HNSW index out
    index_rebuilt: str | None = None  # the index it took out and built again
    index_seconds: float = 0.0  # building it again


@dataclass
class ReembedSummary:
    target: str
    provider: str
    model: str
    dim: int
    all_rows: bool
    dry_run: bool
    index: str = "auto"
    tables: dict[str, TableSummary] = field(default_factory=dict)
    repaired: list[str] = field(default_factory=list)  # indexes a killed run had left out
    seconds: float = 0.0
    stopped: bool = False  # ended early because ``stop`` said so

    @property
    def rows(self) -> int:
        return sum(t.embedded for t in self.tables.values())

    @property
    def remaining(self) -> int:
        return sum(t.pending - t.embedded for t in self.tables.values())

    @property
    def rows_per_second(self) -> float:
        return self.rows / self.seconds if self.seconds > 0 else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "rows": self.rows,
            "remaining": self.remaining,
            "rows_per_second": round(self.rows_per_second, 1),
        }


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during a run, with what the run had done by then (every finished batch is kept,
    and an index taken out has been built again unless a second Ctrl-C stopped that too)."""

    def __init__(self, summary: ReembedSummary) -> None:
        super().__init__()
        self.summary = summary
