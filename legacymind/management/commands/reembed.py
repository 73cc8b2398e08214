"""Re-embed thoughts and KG rows with the current embedding provider."""

from __future__ import annotations

import signal
import threading
from argparse import ArgumentTypeError
from collections.abc import Callable
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from legacymind.errors import ServiceError
from legacymind.progress import logs_through_bar
from legacymind.vectors import reembed
from legacymind.vectors.indexes import INDEX_MODES


def _int_within(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse type: the service checks the same bounds, but names its arguments as the
    task takes them (batch_size); here the error names the option the operator typed."""

    def parse(raw: str) -> int:
        try:
            value = int(raw)
        except ValueError:
            raise ArgumentTypeError(f"invalid int value: {raw!r}") from None
        if value < low or (high is not None and value > high):
            bounds = f"between {low} and {high}" if high is not None else f"at least {low}"
            raise ArgumentTypeError(f"must be {bounds}, not {value}")
        return value

    return parse


class Command(BaseCommand):
    help = (
        "Embed rows whose vector is missing or from another provider/model/dimension "
        "(or every row with --all) using the current EMBEDDING_PROVIDER. Safe to interrupt: "
        "a second run finishes the rest."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--target", choices=reembed.TARGETS, default="all", help="which tables (all)"
        )
        parser.add_argument(
            "--batch-size",
            type=_int_within(1, reembed.MAX_BATCH_SIZE),
            default=reembed.DEFAULT_BATCH_SIZE,
            help=f"rows per embedding call and write ({reembed.DEFAULT_BATCH_SIZE})",
        )
        parser.add_argument(
            "--limit", type=_int_within(1), help="at most this many rows in this run"
        )
        parser.add_argument(
            "--all", action="store_true", dest="all_rows", help="re-embed every row"
        )
        parser.add_argument(
            "--dry-run", action="store_true", help="count the rows it would embed, write nothing"
        )
        parser.add_argument(
            "--index",
            choices=INDEX_MODES,
            default="auto",
            help=(
                "a table's HNSW index during the run: auto (take it out and build it again when "
                "the run rewrites at least REEMBED_INDEX_REBUILD_MIN_ROWS rows and half the "
                "table), keep, or rebuild (always take it out). Searches of a table whose "
                "index is out scan it, slower but with the same answers (auto)"
            ),
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        bar: tqdm[Any] | None = None
        stop = threading.Event()

        def progress(done: int, total: int) -> None:
            nonlocal bar
            if bar is None:
                bar = tqdm(total=total, desc="reembed", unit="row", file=self.stderr._out)
            bar.update(done - bar.n)
            if stop.is_set():
                # Between batches: the counts reported are exactly what was written.
                raise KeyboardInterrupt

        def on_ctrl_c(signum: int, frame: object) -> None:
            stop.set()
            # A second Ctrl-C stops at once (an index taken out is then built by the next run).
            signal.signal(signal.SIGINT, signal.default_int_handler)

        in_main_thread = threading.current_thread() is threading.main_thread()
        previous = signal.signal(signal.SIGINT, on_ctrl_c) if in_main_thread else None

        def notice(line: str) -> None:
            if bar is None:
                self.stderr.write(line)
            else:
                bar.write(line, file=self.stderr._out)

        try:
            with logs_through_bar():  # index builds log a line each
                summary = reembed.rows_reembed(
                    target=opts["target"],
                    batch_size=opts["batch_size"],
                    limit=opts["limit"],
                    all_rows=opts["all_rows"],
                    dry_run=opts["dry_run"],
                    index=opts["index"],
                    progress=progress,
                    notice=notice,
                )
        except ServiceError as exc:
            raise CommandError(exc.detail) from exc
        except KeyboardInterrupt as exc:
            if bar is not None:
                bar.close()
                bar = None
            if isinstance(exc, reembed.Interrupted):
                self._report(exc.summary, interrupted=True)
            # Exit status 130, as a shell reports a command ended by Ctrl-C.
            raise CommandError(
                "interrupted: run the same command again to continue", returncode=130
            ) from None
        finally:
            if bar is not None:
                bar.close()
            if in_main_thread:
                signal.signal(signal.SIGINT, previous)
        self._report(summary)

    def _report(self, summary: reembed.ReembedSummary, *, interrupted: bool = False) -> None:
        using = f"{summary.provider} / {summary.model} / {summary.dim}-d"
        scope = "every row" if summary.all_rows else "rows missing or from another model"
        if summary.dry_run:
            selected = sum(t.selected for t in summary.tables.values())
            self.stdout.write(
                f"Dry run: would re-embed {selected} row(s) ({scope}) with {using}; "
                "nothing written."
            )
        else:
            self.stdout.write(
                ("Interrupted: re-embedded " if interrupted else "Re-embedded ")
                + f"{summary.rows} row(s) ({scope}) with {using} in "
                f"{summary.seconds:.2f} s ({summary.rows_per_second:.1f} rows/s)."
            )
        for label, table in summary.tables.items():
            line = (
                f"  {label}: {table.embedded} embedded, {table.selected} selected, "
                f"{table.pending} pending at start"
            )
            if table.index_rebuilt:
                line += f"; index {table.index_rebuilt} built again in {table.index_seconds:.3f} s"
            elif summary.dry_run and table.rebuild:
                line += "; its HNSW index would be taken out and built again"
            self.stdout.write(line)
        if summary.repaired:
            self.stdout.write(
                f"Built again {len(summary.repaired)} index(es) an earlier run had left out: "
                + ", ".join(summary.repaired)
            )
        if summary.remaining and not summary.dry_run and not interrupted:
            if summary.all_rows:
                self.stdout.write(
                    f"{summary.remaining} row(s) not reached: --all starts over on every run "
                    "(without --all, a run does only rows missing a vector or from another model)."
                )
            else:
                self.stdout.write(
                    f"{summary.remaining} row(s) still pending: run again to continue."
                )
