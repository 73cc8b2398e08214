"""The inner voice (specs 000 and 001): retrieve snippets, synthesise through the chat chain (or
the offline composer), ask a follow-up question, and store the two-thought chain in a dialogue
thread.

The user's question is never stored and never logged (specs/README.md, Decisions): it exists
only in this request's memory and in the prompt sent to the chat provider.
"""

from __future__ import annotations

import logging
import os
import time
import uuid
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import numpy as np
from django.conf import settings
from django.contrib.auth.models import User
from django.db import connection, transaction
from django.db.models import Max
from django.utils import timezone

from agent.safety import NONE, Assessment, assess
from innervoice import compose
from innervoice.models import DialogueExchange, DialogueThread
from innervoice.retrieval import Selection, snippets_select
from innervoice.selectors import thread_get, thread_history, thread_open_latest
from kg.services import extraction_status
from legacymind.celery import Publication
from legacymind.errors import Conflict, NotFound
from legacymind.providers import chat
from legacymind.providers.embeddings import EmbeddingProvider, get_provider
from thoughts.models import Thought
from thoughts.services import thought_create, thought_extract_on_commit

logger = logging.getLogger("innervoice")
SUMMARY_MAX = 4000
_THREAD_LOCK = 7301  # advisory lock namespace: starting an owner's implicit thread


@dataclass(frozen=True)
class AskParams:
    query: str
    top_k: int = 10
    floor: float = 0.3
    mix: float = 0.6
    include_private: bool = False
    include_tags: list[str] = field(default_factory=list)
    exclude_tags: list[str] = field(default_factory=list)
    auto_extract_to_kg: bool = True
    previous_thought_id: uuid.UUID | None = None
    include_feedback: bool = True
    feedback_max_lines: int = 3
    thread_id: uuid.UUID | None = None
    new_thread: str | None = None


@dataclass(frozen=True)
class Extracted:
    # staged (ran in-process) | failed (it raised) | queued (a worker) | not_queued (the broker
    # was down) | skipped
    status: str
    entities: int | None = None
    relationships: int | None = None


@dataclass(frozen=True)
class AskResult:
    answer: str
    synthesis: Thought
    feedback: Thought | None
    selection: Selection
    synth_provider: str
    synth_model: str
    embedding_dim: int
    extracted: Extracted
    thread: DialogueThread
    position: int
    # The distress detector's reading of the question (level and category, never its words):
    # the answer is shown with crisis resources beside it when it is not "none".
    safety: Assessment = NONE


@dataclass(frozen=True)
class _ThreadPlan:
    thread: DialogueThread | None  # continue this one
    topic: str  # else start one with this topic
    expired: DialogueThread | None = None  # and end this one (timed out)
    implicit: bool = False  # no thread_id or new_thread: "the caller's open thread"


def _timed_out(thread: DialogueThread) -> bool:
    limit = timedelta(seconds=settings.INNER_VOICE_TIMEOUT)
    return timezone.now() - thread.last_interaction >= limit


def _thread_plan(*, owner: User, params: AskParams) -> _ThreadPlan:
    if params.thread_id is not None:
        thread = thread_get(user=owner, thread_id=params.thread_id)
        if thread.status == DialogueThread.Status.CLOSED:
            raise Conflict(
                f"thread {thread.id} is closed; start a new one with new_thread",
                fields={"thread_id": ["This thread is closed."]},
            )
        if _timed_out(thread):
            _expire(thread)  # it ended when it timed out: the list shows it closed
            raise Conflict(
                f"thread {thread.id} ended after {settings.INNER_VOICE_TIMEOUT} s without "
                "interaction; start a new one with new_thread",
                fields={"thread_id": ["This thread timed out."]},
            )
        return _ThreadPlan(thread, "")
    if params.new_thread is not None:
        return _ThreadPlan(None, params.new_thread)
    latest = thread_open_latest(user=owner)
    if latest is None:
        return _ThreadPlan(None, "", implicit=True)
    if _timed_out(latest):
        return _ThreadPlan(None, "", expired=latest, implicit=True)
    return _ThreadPlan(latest, "", implicit=True)


def _chat_environ() -> dict[str, str] | None:
    """The chain's environment, with INNER_VOICE_MODEL as the CLI's model when set."""
    if not settings.INNER_VOICE_MODEL:
        return None
    return {**os.environ, "IV_MODELS": settings.INNER_VOICE_MODEL}


def _synthesise(prompt: str, selection: Selection) -> tuple[str, str, str]:
    try:
        result = chat.complete(
            prompt,
            system=compose.SYSTEM,
            temperature=settings.INNER_VOICE_TEMP,
            environ=_chat_environ(),
        )
    except chat.ChatError as exc:
        logger.debug("inner_voice: no chat provider (%s); offline composer", type(exc).__name__)
    else:
        answer = compose.model_answer(result.text)
        if answer:
            return answer, result.provider, result.model
        logger.debug("inner_voice: %s answered only citations; offline composer", result.provider)
    text = compose.synthesis_offline(snippets=selection.snippets)
    return text, compose.OFFLINE_PROVIDER, compose.OFFLINE_MODEL


def _feedback(answer: str, selection: Selection, *, offline: bool, max_lines: int) -> str:
    text = ""
    if not offline:
        try:
            text = chat.complete(
                compose.feedback_prompt(answer=answer),
                temperature=compose.FEEDBACK_TEMPERATURE,
                environ=_chat_environ(),
            ).text
        except chat.ChatError as exc:
            logger.debug("inner_voice: feedback offline (%s)", type(exc).__name__)
    text = compose.feedback_clean(text, max_lines)
    return text or compose.lines_truncate(
        compose.feedback_offline(snippets=selection.snippets), max_lines
    )


def _check_previous(*, owner: User, thought_id: uuid.UUID | None) -> None:
    if thought_id is None:
        return
    if not Thought.objects.filter(id=thought_id, owner_id=owner.pk).exists():
        # A well-formed id naming no thought of the asker's: missing, like a missing path object.
        raise NotFound(
            f"previous_thought_id {thought_id} is not one of your thoughts",
            fields={"previous_thought_id": ["No such thought of yours."]},
        )


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


def _thread_for_write(*, owner: User, plan: _ThreadPlan) -> DialogueThread:
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
        _expire(plan.expired)
    if plan.implicit:
        # Asks made at once without a thread must share the one the first of them starts: one
        # at a time per owner from here, and a thread started meanwhile is taken up.
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [_THREAD_LOCK, owner.pk])
        latest = thread_open_latest(user=owner)
        if latest is not None and not _timed_out(latest):
            taken = DialogueThread.objects.select_for_update().filter(pk=latest.pk).first()
            if taken is not None:  # else deleted since it was read: a new one starts
                return taken
    return DialogueThread.objects.create(owner=owner, topic=plan.topic)


def _expire(thread: DialogueThread) -> None:
    DialogueThread.objects.filter(pk=thread.pk, status=DialogueThread.Status.OPEN).update(
        status=DialogueThread.Status.CLOSED, closed_at=timezone.now(), close_reason="timeout"
    )


def _extracted(*, publication: Publication | None, synth_id: Any) -> Extracted:
    if publication is None:  # not requested, or KG_AUTO_EXTRACT off
        return Extracted("skipped")
    if publication.sent is None:  # the caller's transaction has not committed yet
        return Extracted("queued")
    if not publication.eager:
        # False: the broker was down (logged once); manage.py kg_extract takes it later.
        return Extracted("queued" if publication.sent else "not_queued")
    staged = extraction_status(thought_id=synth_id)
    if staged is None:
        # It ran in-process and raised (logged by the after-commit publisher): nothing staged
        # because nothing was read, not because nothing new was found.
        return Extracted("failed")
    return Extracted("staged", *staged)


def inner_voice_ask(*, owner: User, params: AskParams) -> AskResult:
    """Answer ``params.query`` from the caller's stored material and store the synthesis and
    feedback thoughts (never the query) in one transaction. An embedding failure raises (503)
    before anything is written; no chat provider answering is not an error (offline composer)."""
    # One ask runs the chat chain up to three times (the synthesis, the follow-up question and,
    # after commit when in-process, the synthesis' KG extraction): a hanging CLI must cost its
    # timeout once, not three times.
    with chat.cli_breaker():
        return _ask(owner=owner, params=params)


@dataclass(frozen=True)
class _Composed:
    """What the model (or the offline composer) said: the synthesis and its follow-up."""

    answer: str
    provider: str
    model: str
    content: str  # the answer with its sources line: the synthesis thought's text
    feedback: str | None


@dataclass(frozen=True)
class _Stored:
    thread: DialogueThread
    position: int
    synthesis: Thought
    feedback: Thought | None
    publication: Publication | None


@dataclass(frozen=True)
class _Embedding:
    """How the two thoughts are stored: their vectors (synthesis, then feedback) and privacy."""

    provider: EmbeddingProvider
    vectors: np.ndarray
    private: bool


def _ask(*, owner: User, params: AskParams) -> AskResult:
    started = time.monotonic()
    safety = assess([params.query], where="inner_voice")
    _check_previous(owner=owner, thought_id=params.previous_thought_id)
    plan = _thread_plan(owner=owner, params=params)
    provider = get_provider()
    selection = _retrieve(owner=owner, params=params, provider=provider)
    history, summary = _thread_context(plan=plan, params=params)
    composed = _compose(params=params, selection=selection, history=history, summary=summary)
    # Private material in, private thoughts out: its words must not leak via a public thought.
    private = params.include_private and (selection.private or any(h.private for h in history))
    texts = (
        [composed.content] if composed.feedback is None else [composed.content, composed.feedback]
    )
    vectors = provider.embed(texts)  # before any write: a failure stores nothing
    stored = _store(
        owner=owner,
        params=params,
        plan=plan,
        selection=selection,
        composed=composed,
        embedding=_Embedding(provider, vectors, private),
    )
    extracted = _extracted(publication=stored.publication, synth_id=stored.synthesis.id)
    _log(stored=stored, composed=composed, extracted=extracted, started=started)
    return AskResult(
        answer=composed.answer,
        synthesis=stored.synthesis,
        feedback=stored.feedback,
        selection=selection,
        synth_provider=composed.provider,
        synth_model=composed.model,
        embedding_dim=provider.dim,
        extracted=extracted,
        thread=stored.thread,
        position=stored.position,
        safety=safety,
    )


def _retrieve(*, owner: User, params: AskParams, provider: EmbeddingProvider) -> Selection:
    """Embed the query and select the snippets the answer draws on."""
    vector = [float(x) for x in provider.embed([params.query])[0]]
    return snippets_select(
        user=owner,
        vector=vector,
        model=provider.model,
        top_k=params.top_k,
        floor=params.floor,
        mix=params.mix,
        include_private=params.include_private,
        include_tags=params.include_tags,
        exclude_tags=params.exclude_tags,
    )


def _thread_context(
    *, plan: _ThreadPlan, params: AskParams
) -> tuple[list[compose.HistoryItem], str]:
    """The continued thread's recent exchanges and summary (none for a new thread)."""
    if plan.thread is None:
        return [], ""
    history = thread_history(
        thread=plan.thread,
        window=settings.INNER_VOICE_HISTORY,
        include_private=params.include_private,
    )
    return history, plan.thread.summary


def _compose(
    *,
    params: AskParams,
    selection: Selection,
    history: list[compose.HistoryItem],
    summary: str,
) -> _Composed:
    """The synthesis, then (when asked for) the follow-up question."""
    prompt = compose.synthesis_prompt(
        query=params.query, snippets=selection.snippets, history=history, summary=summary
    )
    answer, synth_provider, synth_model = _synthesise(prompt, selection)
    feedback = None
    if params.include_feedback:
        feedback = _feedback(
            answer,
            selection,
            offline=synth_provider == compose.OFFLINE_PROVIDER,
            max_lines=params.feedback_max_lines,
        )
    content = f"{answer}\n\n{compose.sources_line(selection.sources_compact)}"
    return _Composed(answer, synth_provider, synth_model, content, feedback)


def _store(
    *,
    owner: User,
    params: AskParams,
    plan: _ThreadPlan,
    selection: Selection,
    composed: _Composed,
    embedding: _Embedding,
) -> _Stored:
    """The one transaction: the thread, the synthesis and feedback thoughts, the exchange, the
    thread's summary, and the synthesis' KG extraction (sent once it commits)."""
    publication: Publication | None = None
    with transaction.atomic():
        thread = _thread_for_write(owner=owner, plan=plan)
        synthesis = _thought_store(
            owner=owner,
            embedding=embedding,
            text=composed.content,
            origin=Thought.Origin.INNER_VOICE,
            previous=params.previous_thought_id,
            vector=embedding.vectors[0],
            injected_memories=[
                {"kind": s.kind, "id": s.id, "similarity": round(s.similarity, 4)}
                for s in selection.snippets
                if s.kind != "thought"
            ],
        )
        feedback = None
        if composed.feedback is not None:
            feedback = _thought_store(
                owner=owner,
                embedding=embedding,
                text=composed.feedback,
                origin=Thought.Origin.INNER_VOICE_FEEDBACK,
                previous=synthesis.id,
                vector=embedding.vectors[1],
            )
        position = _exchange_record(
            thread=thread, synthesis=synthesis, feedback=feedback, selection=selection
        )
        if params.auto_extract_to_kg:
            # Committed below: by then it went out (eager: it ran, and staged) or it did not.
            publication = thought_extract_on_commit(thought_id=synthesis.id, origin="inner_voice")
    return _Stored(thread, position, synthesis, feedback, publication)


def _thought_store(
    *,
    owner: User,
    embedding: _Embedding,
    text: str,
    origin: str,
    previous: uuid.UUID | None,
    vector: np.ndarray,
    **extra: Any,
) -> Thought:
    # injection_scale 0: the inner voice's thoughts inject nothing (spec 000).
    return thought_create(
        owner=owner,
        content=text,
        origin=origin,
        embedding=(embedding.provider, vector),
        extract=False,
        injection_scale=0,
        is_private=embedding.private,
        previous_thought_id=previous,
        **extra,
    )


def _exchange_record(
    *,
    thread: DialogueThread,
    synthesis: Thought,
    feedback: Thought | None,
    selection: Selection,
) -> int:
    """Add the exchange at the end of the thread, mark the thread used now, and fold older
    exchanges into its summary. Returns the exchange's position."""
    last = thread.exchanges.aggregate(last=Max("position"))["last"] or 0
    DialogueExchange.objects.create(
        thread=thread,
        position=last + 1,
        synthesis_thought=synthesis,
        feedback_thought=feedback,
        thoughts_provided=selection.thought_ids,
        memories_injected=selection.memory_refs,
    )
    thread.last_interaction = timezone.now()
    thread.save(update_fields=["last_interaction"])
    thread_summarize(thread=thread, window=settings.INNER_VOICE_HISTORY)
    return last + 1


def _log(*, stored: _Stored, composed: _Composed, extracted: Extracted, started: float) -> None:
    logger.info(
        "inner_voice synth_id=%s feedback_id=%s provider=%s model=%s entities=%s edges=%s "
        "latency_ms=%d",
        stored.synthesis.id,
        stored.feedback.id if stored.feedback else None,
        composed.provider,
        composed.model,
        extracted.entities if extracted.entities is not None else extracted.status,
        extracted.relationships if extracted.relationships is not None else extracted.status,
        int((time.monotonic() - started) * 1000),
    )
