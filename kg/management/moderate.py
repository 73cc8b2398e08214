"""What ``kg_moderate`` needs besides its arguments: picking candidates by id without guessing
their kind, and asking before a decision on a whole page of the queue."""

from __future__ import annotations

from typing import Any, TextIO

from django.core.management.base import CommandError, OutputWrapper

from kg import selectors
from kg.models import EntityCandidate, ObservationCandidate

_MAX_ID = 2**63 - 1  # bigint


def candidates_by_ids(raw: str, *, target: str, status: str | None, action: str) -> list[Any]:
    """The candidates named by ``--ids`` wherever they sit in the queue (not only on the page
    that --limit/--offset select). An id that is missing is an error; so is, for a decision, an
    id that names both an entity and an edge candidate under ``mixed``, and for ``alias`` one
    that names an edge candidate: nothing is decided on a guess."""
    try:
        wanted = {int(x) for x in raw.split(",") if x.strip()}
    except ValueError as exc:
        raise CommandError("--ids must be comma-separated integers") from exc
    if not wanted or not all(0 < pk <= _MAX_ID for pk in wanted):
        raise CommandError("--ids must be positive candidate ids")
    entities, edges = selectors.candidate_querysets(status=status)
    found_entities = list(entities.filter(pk__in=wanted)) if target != "relationship" else []
    found_edges = list(edges.filter(pk__in=wanted)) if target != "entity" else []
    entity_ids = {row.pk for row in found_entities}
    if action == "alias":
        edge_only = sorted({row.pk for row in found_edges} - entity_ids)
        if edge_only:
            raise CommandError(
                "only entity candidates can be aliased; --ids names edge candidate(s) "
                + ", ".join(map(str, edge_only))
            )
        found_edges = []
    both = entity_ids & {row.pk for row in found_edges}
    if both and action != "list":
        ambiguous = [row for row in [*found_entities, *found_edges] if row.pk in both]
        matched = "; ".join(candidate_line(row) for row in ambiguous)
        raise CommandError(
            "--ids is ambiguous: an id names both an entity and an edge candidate "
            f"({matched}); pass --target entity or --target edge"
        )
    rows = [*found_entities, *found_edges]
    missing = sorted(wanted - {row.pk for row in rows})
    if missing:
        kind = {"relationship": "edge", "mixed": "entity or edge"}.get(target, target)
        where = f"{kind} candidates" + (f" with status {status}" if status else "")
        raise CommandError(f"--ids not found among {where}: {', '.join(map(str, missing))}")
    return rows


def confirmed(*, prompt: str, stdin: TextIO, stdout: OutputWrapper) -> bool:
    """Ask like ``flush`` does. Without a terminal to ask on, refuse rather than decide a page
    of candidates nobody looked at."""
    if not stdin.isatty():
        raise CommandError(
            "a decision without --ids applies to the whole page above and needs confirmation: "
            "run it in a terminal, pass --no-input, or name candidates with --ids"
        )
    stdout.write(f"{prompt}\nType 'yes' to continue, or 'no' to cancel: ", ending="")
    stdout.flush()
    return stdin.readline().strip().lower() == "yes"


def candidate_line(row: Any) -> str:
    if isinstance(row, EntityCandidate):
        what = f"entity {row.pk}: {row.name} ({row.entity_type})"
    elif isinstance(row, ObservationCandidate):
        what = f"observation {row.pk}: {row.entity_name or '-'}: {row.description or row.name}"
    else:
        what = f"edge {row.pk}: {row.source_name} -[{row.rel_type}]-> {row.target_name}"
    return f"{what} conf={row.confidence:.2f} status={row.status} origin={row.origin}"
