"""Reads of dialogue threads. Another user's thread reads like one that does not exist (404)."""

from __future__ import annotations

import uuid

from django.contrib.auth.models import User
from django.db.models import Count, Exists, OuterRef, Q, QuerySet

from innervoice.compose import HistoryItem
from innervoice.models import DialogueExchange, DialogueThread
from legacymind.errors import NotFound


def threads_list(*, user: User, q: str = "") -> QuerySet[DialogueThread]:
    """The caller's threads, most recently used first, with their exchange counts; with ``q``,
    those whose topic, summary or stored synthesis or follow-up thought contains it (any case).
    Only the caller's threads are searched, and their thoughts are the caller's own."""
    threads = DialogueThread.objects.filter(owner_id=user.pk)
    if q:
        said = DialogueExchange.objects.filter(thread_id=OuterRef("pk")).filter(
            Q(synthesis_thought__content__icontains=q) | Q(feedback_thought__content__icontains=q)
        )
        # Exists, not a join: a join would repeat a thread per matching exchange and inflate
        # its exchange_count.
        threads = threads.filter(Q(topic__icontains=q) | Q(summary__icontains=q) | Exists(said))
    return threads.annotate(exchange_count=Count("exchanges")).order_by(
        "-last_interaction", "-started_at"
    )


def thread_get(*, user: User, thread_id: uuid.UUID | str) -> DialogueThread:
    try:
        return threads_list(user=user).get(id=uuid.UUID(str(thread_id)))
    except (DialogueThread.DoesNotExist, ValueError) as exc:
        raise NotFound(f"thread {thread_id} does not exist") from exc


def thread_exchanges(*, thread: DialogueThread) -> QuerySet[DialogueExchange]:
    return thread.exchanges.select_related("synthesis_thought", "feedback_thought").order_by(
        "position"
    )


def thread_open_latest(*, user: User) -> DialogueThread | None:
    """The caller's open thread used last, if any."""
    return (
        DialogueThread.objects.filter(owner_id=user.pk, status=DialogueThread.Status.OPEN)
        .order_by("-last_interaction")
        .first()
    )


def thread_history(
    *, thread: DialogueThread, window: int, include_private: bool
) -> list[HistoryItem]:
    """The last ``window`` exchanges not folded into the summary, oldest first, as the model
    sees them: earlier syntheses and feedback questions (never the questions, which are not
    stored). A private exchange is left out of a call that may not use private material."""
    rows = list(
        thread.exchanges.filter(summarized=False)
        .select_related("synthesis_thought", "feedback_thought")
        .order_by("-position")[:window]
    )
    items: list[HistoryItem] = []
    for row in reversed(rows):
        synthesis, feedback = row.synthesis_thought, row.feedback_thought
        private = synthesis.is_private or (feedback is not None and feedback.is_private)
        if private and not include_private:
            continue
        items.append(
            HistoryItem(
                row.position, synthesis.content, feedback.content if feedback else "", private
            )
        )
    return items
