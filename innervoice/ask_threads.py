"""Which dialogue thread an ask writes to: the plan read before the answer is composed (a
thread named by id, a new one, or the owner's open one), the thread's row locked inside the
ask's transaction, and the older exchanges folded into the thread's summary after it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.contrib.auth.models import User
from django.db import connection
from django.utils import timezone

from innervoice import compose
from innervoice.models import DialogueExchange, DialogueThread
from innervoice.selectors import thread_get, thread_open_latest
from legacymind.errors import Conflict, NotFound

if TYPE_CHECKING:
    from innervoice.services import AskParams

SUMMARY_MAX = 4000
_THREAD_LOCK = 7301  # advisory lock namespace: starting an owner's implicit thread


@dataclass(frozen=True)
class ThreadPlan:
    thread: DialogueThread | None  # continue this one
    topic: str  # else start one with this topic
    expired: DialogueThread | None = None  # and end this one (timed out)
    implicit: bool = False  # no thread_id or new_thread: "the caller's open thread"


def timed_out(thread: DialogueThread) -> bool:
    limit = timedelta(seconds=settings.INNER_VOICE_TIMEOUT)
    return timezone.now() - thread.last_interaction >= limit


def thread_plan(*, owner: User, params: AskParams) -> ThreadPlan:
    if params.thread_id is not None:
        thread = thread_get(user=owner, thread_id=params.thread_id)
        if thread.status == DialogueThread.Status.CLOSED:
            raise Conflict(
                f"thread {thread.id} is closed; start a new one with new_thread",
                fields={"thread_id": ["This thread is closed."]},
            )
        if timed_out(thread):
            thread_expire(thread)  # it ended when it timed out: the list shows it closed
            raise Conflict(
                f"thread {thread.id} ended after {settings.INNER_VOICE_TIMEOUT} s without "
                "interaction; start a new one with new_thread",
                fields={"thread_id": ["This thread timed out."]},
            )
        return ThreadPlan(thread, "")
    if params.new_thread is not None:
        return ThreadPlan(None, params.new_thread)
    latest = thread_open_latest(user=owner)
    if latest is None:
        return ThreadPlan(None, "", implicit=True)
    if timed_out(latest):
        return ThreadPlan(None, "", expired=latest, implicit=True)
    return ThreadPlan(latest, "", implicit=True)


def thread_summarize(*, thread: DialogueThread, window: int) -> int:
    """Fold the exchanges older than the last ``window`` into the thread's summary (one line per
    exchange, the first sentence of its synthesis) and mark them summarized. Deterministic;
    a private exchange is named, not quoted. Returns how many were folded."""
    open_rows = list(
        thread.exchanges.filter(summarized=False)
        .select_related("synthesis_thought")
        .order_by("position")
    )
    fold = open_rows[: max(0, len(open_rows) - window)]
    if not fold:
        return 0
    lines = [thread.summary] if thread.summary else []
    for row in fold:
        synthesis = row.synthesis_thought
        said = (
            "(private exchange)"
            if synthesis.is_private
            else compose.summary_sentence(synthesis.content)
        )
        lines.append(f"#{row.position}: {said}")
    summary = "\n".join(lines)
    if len(summary) > SUMMARY_MAX:  # keep the most recent lines
        summary = summary[-SUMMARY_MAX:].split("\n", 1)[-1]
    thread.summary = summary
    thread.save(update_fields=["summary"])
    DialogueExchange.objects.filter(id__in=[row.id for row in fold]).update(summarized=True)
    return len(fold)


def thread_for_write(*, owner: User, plan: ThreadPlan) -> DialogueThread:
    """Inside the transaction: the plan's thread, locked and still open, or a new one."""
    if plan.thread is not None:
        found = DialogueThread.objects.select_for_update().filter(pk=plan.thread.pk).first()
        if found is None:  # its owner deleted it while the answer was being composed
            raise NotFound(
                f"thread {plan.thread.pk} was deleted; nothing was stored",
                fields={"thread_id": ["This thread was deleted."]},
            )
        thread = found
        if thread.status == DialogueThread.Status.CLOSED:
            raise Conflict(
                f"thread {thread.id} is closed", fields={"thread_id": ["This thread is closed."]}
            )
        return thread
    if plan.expired is not None:
        thread_expire(plan.expired)
    if plan.implicit:
        # Asks made at once without a thread must share the one the first of them starts: one
        # at a time per owner from here, and a thread started meanwhile is taken up.
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [_THREAD_LOCK, owner.pk])
        latest = thread_open_latest(user=owner)
        if latest is not None and not timed_out(latest):
            taken = DialogueThread.objects.select_for_update().filter(pk=latest.pk).first()
            if taken is not None:  # else deleted since it was read: a new one starts
                return taken
    return DialogueThread.objects.create(owner=owner, topic=plan.topic)


def thread_expire(thread: DialogueThread) -> None:
    DialogueThread.objects.filter(pk=thread.pk, status=DialogueThread.Status.OPEN).update(
        status=DialogueThread.Status.CLOSED, closed_at=timezone.now(), close_reason="timeout"
    )
