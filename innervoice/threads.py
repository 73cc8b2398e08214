"""What a thread's owner does to it besides asking: close it, delete it. Each locks the thread's
row, as an ask writing to it does (``innervoice.ask_threads.thread_for_write``)."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from innervoice.models import DialogueThread
from legacymind.errors import Conflict, NotFound


def thread_close(*, thread: DialogueThread, reason: str = "closed") -> DialogueThread:
    """End a thread (inner_voice_close). Closing a closed thread is a 409, a deleted one a 404."""
    with transaction.atomic():
        locked = _locked(thread)
        if locked.status == DialogueThread.Status.CLOSED:
            raise Conflict(f"thread {thread.id} is closed already")
        locked.status = DialogueThread.Status.CLOSED
        locked.closed_at = timezone.now()
        locked.close_reason = reason
        locked.save(update_fields=["status", "closed_at", "close_reason"])
    return locked


def thread_delete(*, thread: DialogueThread) -> None:
    """Delete a dialogue thread with its exchanges. The thoughts they point at stay: they are
    the owner's thoughts, listed and searched like any other (``DELETE /api/v1/thoughts/{id}/``
    takes one away)."""
    with transaction.atomic():
        # An ask writing to the thread holds this lock (``thread_for_write``): it commits
        # first and its exchange goes too, or it waits and finds the thread gone.
        _locked(thread).delete()


def _locked(thread: DialogueThread) -> DialogueThread:
    """``thread``'s row, locked for this transaction; NotFound when it was deleted meanwhile."""
    locked = DialogueThread.objects.select_for_update().filter(pk=thread.pk).first()
    if locked is None:
        raise NotFound(f"thread {thread.pk} does not exist")
    return locked
