"""The inner voice (specs 000 and 001): retrieve snippets, synthesise through the chat chain (or
the offline composer), ask a follow-up question, and store the two-thought chain in a dialogue
thread.

The user's question is never stored and never logged (specs/README.md, Decisions): it exists
only in this request's memory and in the prompt sent to the chat provider.
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from agent.safety import NONE, Assessment, assess
from innervoice import compose
from innervoice.answer import Composed, answer_compose
from innervoice.ask_threads import ThreadPlan, thread_for_write, thread_plan, thread_summarize
from innervoice.models import DialogueExchange, DialogueThread
from innervoice.retrieval import Selection, snippets_select
from innervoice.selectors import thread_history
from kg.services import extraction_status
from legacymind.celery import Publication
from legacymind.errors import NotFound
from legacymind.providers import chat
from legacymind.providers.embeddings import EmbeddingProvider, get_provider
from thoughts.models import Thought
from thoughts.services import thought_create, thought_extract_on_commit

logger = logging.getLogger("innervoice")


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


def _check_previous(*, owner: User, thought_id: uuid.UUID | None) -> None:
    if thought_id is None:
        return
    if not Thought.objects.filter(id=thought_id, owner_id=owner.pk).exists():
        # A well-formed id naming no thought of the asker's: missing, like a missing path object.
        raise NotFound(
            f"previous_thought_id {thought_id} is not one of your thoughts",
            fields={"previous_thought_id": ["No such thought of yours."]},
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
    plan = thread_plan(owner=owner, params=params)
    provider = get_provider()
    selection = _retrieve(owner=owner, params=params, provider=provider)
    history, summary = _thread_context(plan=plan, params=params)
    composed = answer_compose(params=params, selection=selection, history=history, summary=summary)
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
    *, plan: ThreadPlan, params: AskParams
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


def _store(
    *,
    owner: User,
    params: AskParams,
    plan: ThreadPlan,
    selection: Selection,
    composed: Composed,
    embedding: _Embedding,
) -> _Stored:
    """The one transaction: the thread, the synthesis and feedback thoughts, the exchange, the
    thread's summary, and the synthesis' KG extraction (sent once it commits)."""
    publication: Publication | None = None
    with transaction.atomic():
        thread = thread_for_write(owner=owner, plan=plan)
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


def _log(*, stored: _Stored, composed: Composed, extracted: Extracted, started: float) -> None:
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
