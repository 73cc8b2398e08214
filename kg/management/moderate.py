"""What ``kg_moderate`` needs besides its arguments: picking candidates by id without guessing
their kind, and asking before a decision on a whole page of the queue."""

from __future__ import annotations

from collections import Counter
from typing import Any, TextIO

from django.core.management.base import CommandError, OutputWrapper

from kg import selectors
from kg.models import EntityCandidate, ObservationCandidate

_MAX_ID = 2**63 - 1  # bigint


def candidates_by_ids(raw: str, *, target: str, status: str | None, action: str) -> list[Any]:
    """The candidates named by ``--ids`` wherever they sit in the queue (not only on the page
    that --limit/--offset select). An id that is missing is an error; so is, for a decision, an
    id that names candidates of two kinds under ``mixed``, and for ``alias`` one that names an
    edge or observation candidate: nothing is decided on a guess."""
    try:
        wanted = {int(x) for x in raw.split(",") if x.strip()}
    except ValueError as exc:
        raise CommandError("--ids must be comma-separated integers") from exc
    if not wanted or not all(0 < pk <= _MAX_ID for pk in wanted):
        raise CommandError("--ids must be positive candidate ids")
    found = _by_kind(wanted, target=target, status=status)
    entity_ids = {row.pk for row in found["entity"]}
    if action == "alias":
        others = sorted({row.pk for row in [*found["edge"], *found["observation"]]} - entity_ids)
        if others:
            raise CommandError(
                "only entity candidates can be aliased; --ids names edge or observation "
                "candidate(s) " + ", ".join(map(str, others))
            )
        found = {"entity": found["entity"]}
    rows = [row for kind_rows in found.values() for row in kind_rows]
    seen = Counter(row.pk for row in rows)
    if action != "list" and any(n > 1 for n in seen.values()):
        matched = "; ".join(candidate_line(row) for row in rows if seen[row.pk] > 1)
        raise CommandError(
            "--ids is ambiguous: an id names candidates of more than one kind "
            f"({matched}); pass --target entity or --target edge (or --target observation)"
        )
    missing = sorted(wanted - set(seen))
    if missing:
        kind = {"relationship": "edge", "mixed": "entity, edge or observation"}.get(target, target)
        where = f"{kind} candidates" + (f" with status {status}" if status else "")
        raise CommandError(f"--ids not found among {where}: {', '.join(map(str, missing))}")
    return rows


def _by_kind(wanted: set[int], *, target: str, status: str | None) -> dict[str, list[Any]]:
    """The candidates of each kind ``target`` takes whose ids are in ``wanted``."""
    entities, edges = selectors.candidate_querysets(status=status)
    observations = selectors.observation_candidates(status=status)
    takes = {"entity": ("entity",), "relationship": ("edge",), "observation": ("observation",)}
    kinds = takes.get(target, ("entity", "edge", "observation"))
    querysets = {"entity": entities, "edge": edges, "observation": observations}
    return {
        kind: list(qs.filter(pk__in=wanted)) if kind in kinds else []
        for kind, qs in querysets.items()
    }


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
