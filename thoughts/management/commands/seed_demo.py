"""Seed the demo user, thought chains, a small knowledge graph and a moderation queue."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from legacymind.errors import ServiceError
from thoughts.demo import demo_seed


class Command(BaseCommand):
    help = "Create demo data for `make run` (idempotent: a second run creates nothing)."

    def handle(self, *args: Any, **opts: Any) -> None:
        try:
            summary = demo_seed()
        except ServiceError as exc:  # e.g. the embedding provider is unreachable
            raise CommandError(f"seed_demo: {exc.detail}") from exc
        made = sum(summary.created.values())
        totals = ", ".join(f"{name} {count}" for name, count in summary.totals.items())
        self.stdout.write(
            f"Demo data for user {summary.user!r}: "
            + (f"created {made} rows" if made else "already present, nothing created")
            + f"; embedded {summary.embedded} with {summary.provider}/{summary.model} "
            f"({summary.dim}-d).\n  totals: {totals}"
        )
