"""The moderation queue from the terminal: list, approve, reject."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from kg import selectors, services
from kg.models import CandidateStatus, EntityCandidate
from legacymind.pagination import MAX_OFFSET

_MAX_ID = 2**63 - 1  # bigint


class Command(BaseCommand):
    help = "List, approve or reject staged KG candidates (filters as memories_moderate)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=["list", "approve", "reject"])
        parser.add_argument("--target", choices=selectors.TARGETS, default="mixed")
        parser.add_argument("--status", default="pending", help="pending, approved, ... or all")
        parser.add_argument("--min-conf", type=float)
        parser.add_argument("--limit", type=int, default=50)
        parser.add_argument("--offset", type=int, default=0)
        parser.add_argument(
            "--ids",
            help="comma-separated candidate ids, anywhere in the queue (default: the filters); "
            "with --target mixed an id names the candidate of either kind",
        )
        parser.add_argument("--note", default="", help="review note")
        parser.add_argument("--user", help="reviewer username (must have kg.moderate)")
        parser.add_argument("--dry-run", action="store_true", help="report without writing")

    def handle(self, *args: Any, **opts: Any) -> None:
        status = None if opts["status"] == "all" else opts["status"]
        if status is not None and status not in CandidateStatus.values:
            raise CommandError(f"--status must be one of {', '.join(CandidateStatus.values)}, all")
        if not 1 <= opts["limit"] <= 200:
            raise CommandError("--limit must be 1..200")
        if opts["min_conf"] is not None and not 0 <= opts["min_conf"] <= 1:
            raise CommandError("--min-conf must be 0..1")
        if not 0 <= opts["offset"] <= MAX_OFFSET:
            raise CommandError(f"--offset must be 0..{MAX_OFFSET}")
        if opts["ids"]:
            rows = self._by_ids(opts["ids"], target=opts["target"], status=status)
            count = len(rows)
        else:
            page = selectors.candidates_list(
                target=opts["target"],
                status=status,
                min_conf=opts["min_conf"],
                limit=opts["limit"],
                offset=opts["offset"],
            )
            rows, count = page.rows, page.count
        if opts["action"] == "list":
            self.stdout.write(f"{count} candidate(s); showing {len(rows)}")
            for row in rows:
                self.stdout.write(_line(row))
            return
        reviewer = self._reviewer(opts["user"])
        items = [
            services.DecisionItem(
                row.pk,
                "entity" if isinstance(row, EntityCandidate) else "edge",
                opts["action"],
                opts["note"],
            )
            for row in rows
        ]
        outcomes = services.candidates_decide(
            items=items, reviewer=reviewer, dry_run=opts["dry_run"]
        )
        for outcome in outcomes:
            mark = "ok  " if outcome.ok else "FAIL"
            self.stdout.write(f"{mark} {outcome.kind} {outcome.id}: {outcome.detail}")
        done = sum(o.ok for o in outcomes)
        self.stdout.write(f"{opts['action']}: {done} of {len(outcomes)} candidate(s)")

    def _by_ids(self, raw: str, *, target: str, status: str | None) -> list[Any]:
        """The candidates named by ``--ids`` wherever they sit in the queue (not only on the
        page that --limit/--offset select); an id that is not there is an error."""
        try:
            wanted = {int(x) for x in raw.split(",") if x.strip()}
        except ValueError as exc:
            raise CommandError("--ids must be comma-separated integers") from exc
        if not wanted or not all(0 < pk <= _MAX_ID for pk in wanted):
            raise CommandError("--ids must be positive candidate ids")
        entities, edges = selectors.candidate_querysets(status=status)
        rows: list[Any] = []
        if target in ("entity", "mixed"):
            rows += entities.filter(pk__in=wanted)
        if target in ("relationship", "mixed"):
            rows += edges.filter(pk__in=wanted)
        missing = sorted(wanted - {row.pk for row in rows})
        if missing:
            where = f"{target} candidates" + (f" with status {status}" if status else "")
            raise CommandError(f"--ids not found among {where}: {', '.join(map(str, missing))}")
        return rows

    def _reviewer(self, username: str | None) -> Any:
        if not username:
            return None
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"user {username!r} does not exist")
        if not user.has_perm("kg.moderate"):
            raise CommandError(f"user {username!r} is not a KG moderator")
        return user


def _line(row: Any) -> str:
    if isinstance(row, EntityCandidate):
        what = f"entity {row.pk}: {row.name} ({row.entity_type})"
    else:
        what = f"edge {row.pk}: {row.source_name} -[{row.rel_type}]-> {row.target_name}"
    return f"{what} conf={row.confidence:.2f} status={row.status} origin={row.origin}"
