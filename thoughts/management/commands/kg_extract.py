"""Extract entities and relations from stored thoughts and stage them for moderation."""

from __future__ import annotations

import uuid
from collections import Counter, defaultdict
from datetime import datetime
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from legacymind.dates import BadMoment, parse_moment
from legacymind.errors import ServiceError
from legacymind.progress import logs_through_bar
from thoughts import services
from thoughts.models import Thought


def _since(value: str) -> datetime:
    try:
        return parse_moment(value)
    except BadMoment as exc:
        raise CommandError(f"--since {value!r} {exc}") from exc


class Command(BaseCommand):
    help = (
        "Run the extractor chain (CLI -> Grok -> heuristic) over thoughts and stage candidates "
        "for moderation. Takes the oldest thoughts not extracted yet (a thought counts as "
        "extracted once a run, or the automatic extraction on think, has staged its results, "
        "even if it found nothing new), so running it again continues with the next --limit "
        "thoughts. --redo takes every matching thought again; --thought ids are always taken."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--thought", action="append", default=[], help="thought id (repeat)")
        parser.add_argument("--since", help="only thoughts created at or after this date")
        parser.add_argument(
            "--origin", help=f"only thoughts with this origin ({', '.join(Thought.Origin.values)})"
        )
        parser.add_argument("--limit", type=int, default=100, help="at most this many (100)")
        parser.add_argument(
            "--redo",
            "--all",
            dest="redo",
            action="store_true",
            help="also take thoughts already extracted (the oldest --limit of them again)",
        )
        parser.add_argument("--dry-run", action="store_true", help="extract but write nothing")

    def handle(self, *args: Any, **opts: Any) -> None:
        if opts["limit"] < 1:
            raise CommandError("--limit must be at least 1")
        qs = Thought.objects.order_by("created_at").only("id")
        if opts["thought"]:
            try:
                wanted = {uuid.UUID(value) for value in opts["thought"]}
            except ValueError as exc:
                raise CommandError(f"--thought must be thought ids (UUIDs): {exc}") from exc
            qs = qs.filter(id__in=wanted)
        if opts["since"]:
            qs = qs.filter(created_at__gte=_since(opts["since"]))
        if opts["origin"]:
            if opts["origin"] not in Thought.Origin.values:
                raise CommandError(
                    f"--origin {opts['origin']!r} is not one of {', '.join(Thought.Origin.values)}"
                )
            qs = qs.filter(origin=opts["origin"])
        if not opts["redo"] and not opts["thought"]:
            # Without this, every run took the same oldest --limit thoughts and never got past
            # them; a dry run records nothing, so it previews what the real run will take.
            qs = qs.filter(kg_extraction__isnull=True)
        ids = list(qs.values_list("id", flat=True)[: opts["limit"]])
        if opts["thought"] and len(ids) < len(wanted):
            raise CommandError("some --thought ids do not exist")
        totals: dict[str, Counter[str]] = defaultdict(Counter)
        failures = 0
        bar = tqdm(ids, desc="kg_extract", unit="thought", file=self.stderr._out)
        with logs_through_bar():  # the extractor chain logs each stage
            for thought_id in bar:
                try:
                    result, staged = services.thought_extract(
                        thought_id=thought_id, dry_run=opts["dry_run"]
                    )
                except ServiceError as exc:
                    failures += 1
                    bar.write(f"{thought_id}: {exc.detail}", file=self.stderr._out)
                    continue
                row = totals[result.provider]
                row.update(
                    thoughts=1,
                    entities=len(result.entities),
                    edges=len(result.edges),
                    staged_entities=staged.entities,
                    staged_edges=staged.edges,
                )
        mode = " (dry run: nothing written)" if opts["dry_run"] else ""
        self.stdout.write(f"Extracted {len(ids) - failures} of {len(ids)} thought(s){mode}.")
        if not ids and not opts["redo"] and not opts["thought"]:
            self.stdout.write("Every matching thought is already extracted (--redo to redo them).")
        for provider, row in sorted(totals.items()):
            self.stdout.write(
                f"  {provider}: {row['thoughts']} thought(s), {row['entities']} entities, "
                f"{row['edges']} edges, staged {row['staged_entities']} entities and "
                f"{row['staged_edges']} edges"
            )
        if failures:
            raise CommandError(f"{failures} thought(s) failed")
