"""The moderation queue from the terminal: list, approve, reject, alias."""

from __future__ import annotations

import sys
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser, User
from django.core.management.base import BaseCommand, CommandError, CommandParser

from kg import selectors, services
from kg.management.moderate import candidate_line, candidates_by_ids, confirmed
from kg.models import CandidateStatus, Entity
from kg.selectors.visibility import memories_visible_to
from legacymind.api.pagination import MAX_OFFSET

# What a bulk decision will do, said before asking to go on.
_CONSEQUENCE = {
    "approve": "promote them to the graph",
    "reject": "blocklist each one's entity name, relation or observation",
}


class Command(BaseCommand):
    help = (
        "List, approve, reject or alias staged KG candidates: the moderation queue of the admin "
        "and of GET /api/v1/kg/candidates/, with the same filters. "
        "Decisions need --user, a KG moderator, who is recorded as the reviewer; without --ids "
        "they apply to the page the filters select and ask for confirmation first."
    )
    stealth_options = ("stdin",)

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=["list", "approve", "reject", "alias"])
        parser.add_argument(
            "--target",
            choices=["entity", "edge", "relationship", "observation", "mixed"],
            default="mixed",
            help="entity, edge (or relationship) or observation candidates, or mixed: all "
            "(default: %(default)s)",
        )
        parser.add_argument(
            "--status",
            default="pending",
            help="pending, approved, ... or all (default: %(default)s)",
        )
        parser.add_argument(
            "--min-conf",
            type=float,
            help="only candidates with at least this confidence, 0..1 (default: no minimum)",
        )
        parser.add_argument(
            "--limit", type=int, default=50, help="page size, 1..200 (default: %(default)s)"
        )
        parser.add_argument(
            "--offset",
            type=int,
            default=0,
            help=f"candidates to skip before the page, 0..{MAX_OFFSET} (default: %(default)s)",
        )
        parser.add_argument(
            "--ids",
            help="comma-separated candidate ids, anywhere in the queue (default: the page the "
            "filters select); with --target mixed an id that names candidates of two kinds is "
            "refused for a decision",
        )
        parser.add_argument(
            "--canonical",
            type=int,
            help="alias: the id of the entity the candidates in --ids become aliases of",
        )
        parser.add_argument("--note", default="", help="review note")
        parser.add_argument(
            "--user",
            help="reviewer username, a KG moderator; required for approve, reject and alias "
            "(not with --dry-run) and recorded as the reviewer",
        )
        parser.add_argument("--dry-run", action="store_true", help="report without writing")
        parser.add_argument(
            "--noinput",
            "--no-input",
            action="store_false",
            dest="interactive",
            help="decide the page without --ids without asking for confirmation",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        action, target = opts["action"], opts["target"]
        target = "relationship" if target == "edge" else target
        status = None if opts["status"] == "all" else opts["status"]
        self._check(opts, action=action, target=target, status=status)
        deciding = action != "list"
        reviewer = self._reviewer(opts["user"], required=deciding and not opts["dry_run"])
        rows, count = self._rows(opts, action=action, target=target, status=status)
        if deciding:
            self._decide(action, rows, count, reviewer, opts)
            return
        self.stdout.write(f"{count} candidate(s); showing {len(rows)}")
        for row in rows:
            self.stdout.write(candidate_line(row))

    def _rows(
        self, opts: dict[str, Any], *, action: str, target: str, status: str | None
    ) -> tuple[list[Any], int]:
        """The candidates named by --ids, else the page the filters select; and how many match."""
        if opts["ids"]:
            rows = candidates_by_ids(opts["ids"], target=target, status=status, action=action)
            return rows, len(rows)
        page = selectors.candidates_list(
            target=target,
            status=status,
            min_conf=opts["min_conf"],
            limit=opts["limit"],
            offset=opts["offset"],
        )
        return page.rows, page.count

    def _decide(
        self, action: str, rows: list[Any], count: int, reviewer: User | None, opts: dict[str, Any]
    ) -> None:
        if action == "alias":
            self._check_canonical(opts["canonical"], reviewer)
        # A page picked by filters is easy to get wrong (and reject blocklists): ask first.
        ask = rows and not opts["ids"] and not opts["dry_run"] and opts["interactive"]
        if ask:
            assert reviewer is not None  # required for a decision that is not a dry run
            if not self._confirm(action, rows, count, reviewer, opts):
                self.stdout.write("Cancelled; nothing was decided.")
                return
        items = [
            services.DecisionItem(
                id=row.pk,
                kind=selectors.candidate_kind(row),
                decision=action,
                note=opts["note"],
                canonical_id=opts["canonical"],
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
        self.stdout.write(f"{action}: {done} of {len(outcomes)} candidate(s)")
        if done < len(outcomes):  # a script must see it: exit status 1, not 0
            failed = len(outcomes) - done
            raise CommandError(f"{failed} candidate(s) not decided: see the FAIL lines above")

    def _check(self, opts: dict[str, Any], *, action: str, target: str, status: str | None) -> None:
        if status is not None and status not in CandidateStatus.values:
            raise CommandError(f"--status must be one of {', '.join(CandidateStatus.values)}, all")
        if not 1 <= opts["limit"] <= 200:
            raise CommandError("--limit must be 1..200")
        if opts["min_conf"] is not None and not 0 <= opts["min_conf"] <= 1:
            raise CommandError("--min-conf must be 0..1")
        if not 0 <= opts["offset"] <= MAX_OFFSET:
            raise CommandError(f"--offset must be 0..{MAX_OFFSET}")
        if action != "alias":
            if opts["canonical"] is not None:
                raise CommandError("--canonical applies only to alias")
            return
        if target in ("relationship", "observation"):
            raise CommandError("only entity candidates can be aliased: use --target entity")
        if not opts["ids"]:
            raise CommandError("alias needs --ids: the entity candidates to alias")
        if opts["canonical"] is None:
            raise CommandError("alias needs --canonical: the id of the entity to alias them to")

    def _confirm(
        self, action: str, rows: list[Any], count: int, reviewer: User, opts: dict[str, Any]
    ) -> bool:
        for row in rows:
            self.stdout.write(candidate_line(row))
        prompt = (
            f"This will {action} the {len(rows)} candidate(s) above ({count} match the filters) "
            f"and {_CONSEQUENCE[action]}, with {reviewer.get_username()!r} as the reviewer."
        )
        return confirmed(prompt=prompt, stdin=opts.get("stdin") or sys.stdin, stdout=self.stdout)

    def _check_canonical(self, canonical: int, reviewer: User | None) -> None:
        # The reviewer's view, as the alias service uses: a hidden entity reads as missing.
        visible = memories_visible_to(reviewer or AnonymousUser(), Entity)
        if not visible.filter(pk=canonical).exists():
            raise CommandError(
                f"--canonical {canonical} names no entity: pass the id of an entity in the graph "
                "(not of a candidate)"
            )

    def _reviewer(self, username: str | None, *, required: bool) -> User | None:
        if not username:
            if required:
                raise CommandError(
                    "a decision needs --user USERNAME (a KG moderator), recorded as the reviewer"
                )
            return None
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"user {username!r} does not exist")
        if not user.has_perm("kg.moderate"):
            raise CommandError(f"user {username!r} is not a KG moderator")
        return user
