"""agent_act: one HTTP turn of /v3/agent/act with integrity, idempotency, concurrency, rate
guard, metrics and the per-turn log line (hashes only, never text)."""

from __future__ import annotations

import hashlib
import json
import logging
import time
from typing import Any

from django.conf import settings
from django.core.cache import cache
from pydantic import TypeAdapter, ValidationError

from agent import metrics
from agent.engine.loop import TurnOutcome, start, step
from agent.engine.questions import text_hash
from agent.errors import (
    BudgetExhausted,
    IdempotencyKeyReused,
    IntegrityMismatch,
    RateLimited,
    RevisionInProgress,
    StaleRevision,
    StateComplete,
)
from agent.integrity import sign, verify
from agent.schemas import AgentActInitRequest, AgentActRequest, AgentActStepRequest, AskUserAction
from legacymind.errors import ServiceError

logger = logging.getLogger("agent.turns")
_REQUEST = TypeAdapter(AgentActRequest)
CLAIM_TTL = 24 * 3600  # a revision, once continued, stays taken (stale replays get 409)
PENDING_TTL = 60  # a claim whose process died frees itself: the revision can be retried


def pydantic_fields(exc: ValidationError, *, tags: tuple[str, ...] = ()) -> dict[str, list[str]]:
    """Field path → messages. ``tags``: the discriminator values pydantic puts first in the
    location of a tagged union's errors; dropped so paths name fields of the request body."""
    fields: dict[str, list[str]] = {}
    for err in exc.errors():
        loc = list(err["loc"])
        if loc and loc[0] in tags:
            loc = loc[1:]
        key = ".".join(str(p) for p in loc)
        if not key:
            key = "mode" if err["type"].startswith("union_tag") else "non_field_errors"
        fields.setdefault(key, []).append(err["msg"])
    return fields


def rate_guard(*, client_id: str) -> None:
    limit = settings.AGENT_RATE_PER_MINUTE
    if not limit:
        return
    window = int(time.time() // 60)
    key = f"agent:rate:{client_id}:{window}"
    cache.add(key, 0, 90)
    try:
        count = cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, 90)
        count = 1
    if count > limit:
        retry = 60 - int(time.time() % 60)
        raise RateLimited(
            f"More than {limit} agent turns a minute; retry in {retry} s.", retry_after=retry
        )


def _render(outcome: TurnOutcome, *, client_id: str) -> bytes:
    sign(outcome.response.state, client_id=client_id)
    return outcome.response.model_dump_json().encode()


def agent_act(*, data: Any, idempotency_key: str | None, client_id: str) -> bytes:
    """Validate, run one turn, sign the new state; returns the exact response body."""
    started = time.perf_counter()
    rate_guard(client_id=client_id)
    try:
        request = _REQUEST.validate_python(data)
    except ValidationError as exc:
        fields = pydantic_fields(exc, tags=("init", "continue"))
        first = next(iter(fields.items()))
        raise ServiceError(f"Invalid input. {first[0]}: {first[1][0]}", fields=fields) from exc
    if isinstance(request, AgentActInitRequest):
        outcome = start(request.journal_entry)
        body = _render(outcome, client_id=client_id)
        _observe("init", outcome, started, entry=request.journal_entry.text)
        return body
    assert isinstance(request, AgentActStepRequest)
    return _continue(request, idempotency_key, started, client_id=client_id)


def _continue(
    request: AgentActStepRequest, idempotency_key: str | None, started: float, *, client_id: str
) -> bytes:
    state = request.state
    # Signed for another client is refused as tampering is: same code, status and words, so
    # the answer does not tell whether a state exists for someone else.
    if not verify(state, client_id=client_id):
        raise IntegrityMismatch(
            "State integrity check failed: send the state exactly as the server returned it."
        )
    if state.exit_flags.get("complete"):
        if state.exit_flags.get("budget"):
            raise BudgetExhausted("This session used its budget and is complete.")
        raise StateComplete("This session is already complete.")
    # Claims and replays are per client as well as per revision: a state reaching the claim has
    # verified for this client, and the namespace keeps anyone else from ever taking (and
    # burning) the owner's revision, whatever a future check lets through.
    base = f"agent:{client_id}:{state.state_id}:{state.revision}"
    idem_key = fingerprint = None
    if idempotency_key:
        # The key replays one request: its cached answer carries the request's fingerprint, and
        # a different body under the same key is refused rather than answered with the first.
        canonical = json.dumps(request.model_dump(mode="json"), sort_keys=True)
        fingerprint = hashlib.sha256(canonical.encode()).hexdigest()
        idem_key = f"{base}:idem:{hashlib.sha256(idempotency_key.encode()).hexdigest()[:32]}"
        cached = cache.get(idem_key)
        if isinstance(cached, dict):
            if cached["request"] != fingerprint:
                raise IdempotencyKeyReused(
                    "This Idempotency-Key was already used with a different request body; "
                    "send a new key for a new request.",
                    fields={"Idempotency-Key": ["Already used with a different request body."]},
                )
            return bytes(cached["body"])
    claim = f"{base}:claim"
    # The first continue for a revision wins; cache.add is atomic (primary key in the database
    # cache, SET NX in Redis), so two processes cannot both claim it.
    if not cache.add(claim, "pending", PENDING_TTL):
        if cache.get(claim) == "done":
            raise StaleRevision(
                f"Revision {state.revision} of this state was already continued; "
                "send the latest state."
            )
        raise RevisionInProgress(f"Another request is continuing revision {state.revision}.")
    try:
        outcome = step(state, request.user_event)
        body = _render(outcome, client_id=client_id)
    except Exception:
        cache.delete(claim)  # nothing happened: the client may retry this revision
        raise
    cache.set(claim, "done", CLAIM_TTL)
    if idem_key:
        cached = {"request": fingerprint, "body": body}
        cache.set(idem_key, cached, settings.AGENT_IDEMPOTENCY_TTL)
    _observe("continue", outcome, started, entry=state.journal_entry.text)
    return body


def _observe(mode: str, outcome: TurnOutcome, started: float, *, entry: str) -> None:
    latency_ms = (time.perf_counter() - started) * 1000
    reduction = outcome.entropy_before - outcome.entropy_after
    metrics.observe_turn(
        mode=mode,
        action_type=outcome.action_type,
        exit_reason=outcome.exit_reason,
        latency_ms=latency_ms,
        entropy_reduction=reduction,
    )
    if outcome.guard_level != "none":
        metrics.GUARDRAIL.labels(level=outcome.guard_level, where=mode).inc()
    state = outcome.response.state
    action = outcome.response.action
    question_sha = text_hash(action.question) if isinstance(action, AskUserAction) else "-"
    targets = (
        ",".join(str(t)[:8] for t in action.targets) if isinstance(action, AskUserAction) else "-"
    )
    logger.info(
        "agent_turn %s",
        json.dumps(
            {
                "state_id": str(state.state_id),
                "revision": state.revision,
                "action_type": outcome.action_type,
                "evi_bits": round(outcome.evi_bits, 4),
                "exit_reason": outcome.exit_reason,
                "seed": outcome.seed,
                "entry_sha": text_hash(entry),
                "question_sha": question_sha,
                "targets": targets,
                "top2": [round(p, 3) for p in outcome.top2],
                "merges": outcome.merges,
                "entropy_reduction_bits": round(reduction, 4),
                "latency_ms": round(latency_ms, 2),
            },
            sort_keys=True,
        ),
    )
